#!/usr/bin/env bash
# The plan job of .github/workflows/conformance.yml: which versions and shard each job runs, within GitHub's limit of
# 256 jobs per matrix, on which runner kind, keeping only the (versions, shard, runner) jobs with a selected cell that
# the restored results (STORED) do not answer on that runner's platform. Writes to $GITHUB_OUTPUT (or stdout):
#   matrix       {"include": [{"os", "platform", "job": {"jax", "shard", "name"}, "cells", "to_run"}, ...]}
#   job_count    how many jobs the matrix holds (0: nothing new; the shard job is skipped)
#   jobs, shard_count, total_jobs   the full plan, as before (every version, shard and runner)
# and the plan's one-line summary to the log (and $GITHUB_STEP_SUMMARY). The tests run this very script.
#
#   VERSIONS  JAX versions and/or matrix names ("all", "quick latest"); `latest` and `all` read the index
#   RUNNERS   the runner kinds, separated by spaces (ubuntu-24.04 ubuntu-24.04-arm macos-14 windows-2022)
#   SHARDS    shards per version while they fit (default 2)
#   STORED    the folder of restored result files (optional: without it every job has work)
#   SELECT    a -k expression (optional)
#   INDEX_URL the simple index to read releases from (optional; else UV_INDEX_URL, PyPI)
#   PYTHON    the interpreter that has jax-conformance installed (default python)
set -euo pipefail
py="${PYTHON:-python}"
args=(matrix "${VERSIONS:?set VERSIONS}" --ci-runners "${RUNNERS:?set RUNNERS}" --shards "${SHARDS:-2}")
if [[ -n "${STORED:-}" ]]; then args+=(--stored "$STORED"); fi
if [[ -n "${SELECT:-}" ]]; then args+=(-k "$SELECT"); fi
if [[ -n "${INDEX_URL:-}" ]]; then args+=(--index-url "$INDEX_URL"); fi
said="$(mktemp)"
trap 'rm -f "$said"' EXIT
status=0
plan="$("$py" -m conformance "${args[@]}" 2> "$said" | tr -d '\r')" || status=$?
cat "$said" >&2
if [[ "$status" -ne 0 ]]; then exit "$status"; fi
if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then cat "$said" >> "$GITHUB_STEP_SUMMARY"; fi
out="${GITHUB_OUTPUT:-/dev/stdout}"
"$py" - "$plan" >> "$out" <<'PY'
import json, sys
plan = json.loads(sys.argv[1])
print("matrix=" + json.dumps({"include": plan["include"]}))
print(f"job_count={plan['planned_jobs']}")
print("jobs=" + json.dumps(plan["jobs"]))
print(f"shard_count={plan['shard_count']}")
print(f"total_jobs={plan['total_jobs']}")
print(f"cells={plan['cells']}")
print(f"to_run={plan['to_run']}")
PY

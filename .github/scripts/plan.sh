#!/usr/bin/env bash
# The plan job of .github/workflows/conformance.yml: which versions and shard each job runs, within GitHub's
# limit of 256 jobs per matrix (runners x jobs). Writes `jobs` (JSON list) and `shard_count` to $GITHUB_OUTPUT,
# or to stdout without it. The tests run this very script.
#
#   VERSIONS  JAX versions and/or matrix names ("all", "quick latest"); `latest` and `all` read the index
#   RUNNERS   how many runners the shard job's `os` list holds
#   SHARDS    shards per version while they fit (default 2)
#   PYTHON    the interpreter that has jax-conformance installed (default python)
set -euo pipefail
py="${PYTHON:-python}"
plan="$("$py" -m conformance matrix "${VERSIONS:?set VERSIONS}" --ci-jobs "${RUNNERS:?set RUNNERS}" \
        --shards "${SHARDS:-2}" | tr -d '\r')"
out="${GITHUB_OUTPUT:-/dev/stdout}"
"$py" - "$plan" >> "$out" <<'PY'
import json, sys
plan = json.loads(sys.argv[1])
print("jobs=" + json.dumps(plan["jobs"]))
print(f"shard_count={plan['shard_count']}")
print(f"total_jobs={plan['total_jobs']}")
PY

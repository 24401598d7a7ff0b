#!/usr/bin/env bash
# The restore step of .github/workflows/conformance.yml (plan, shard and report jobs): fetch the result files of the
# last published run from the site (`results/index.json` and the files it names), each checked against the index's
# sha256 and read like any result file (schema, size, the header's version and platform against the file name), into
# the results folder, so `run` and the plan answer every cell whose key is unchanged. A file that fails is set aside
# (named in one line) and its cells run; a restore that fails (first run, site down, bad index) restores nothing,
# says so in one line, and the run runs everything. Always exits 0. The tests run this very script.
#
#   SITE_URL   the published site (http(s) URL), a file:// URL or a local folder standing in for it (empty: the
#              Pages site of PAGES_REPOSITORY; neither: nothing is restored)
#   PAGES_REPOSITORY  OWNER/NAME, whose Pages site https://OWNER.github.io/NAME/ stands when SITE_URL is empty
#              (the workflow gives github.repository: a schedule event's payload names no repository)
#   RESULTS    the folder to restore into (default results)
#   KEEP       also copy the restored files and the site's history.json here, untouched by the run (optional)
#   PLATFORM   restore only this platform's files (optional; default every platform)
#   PYTHON     the interpreter that has jax-conformance installed (default python)
#
# Writes `restored=N files, NAMES-SHA256` (how many result files RESULTS holds afterwards, and a digest of their sorted
# names) to $GITHUB_OUTPUT when set: the report job compares it with the plan job's, so that a restore failing in
# between never publishes a site missing what was not rerun (a count alone passes when one file failed in each job).
set -euo pipefail
py="${PYTHON:-python}"
results="${RESULTS:-results}"
mkdir -p "$results"
if [[ -n "${KEEP:-}" ]]; then mkdir -p "$KEEP"; fi
site_url="${SITE_URL:-}"
if [[ -z "$site_url" && "${PAGES_REPOSITORY:-}" == */* ]]; then
    site_url="https://${PAGES_REPOSITORY%%/*}.github.io/${PAGES_REPOSITORY#*/}/"
fi
if [[ -z "$site_url" ]]; then
    echo "jax-conformance: restore: no SITE_URL given; nothing restored, every cell runs"
else
    args=("$site_url" --into "$results")
    if [[ -n "${KEEP:-}" ]]; then args+=(--keep "$KEEP"); fi
    if [[ -n "${PLATFORM:-}" ]]; then args+=(--platform "$PLATFORM"); fi
    "$py" "$(dirname "${BASH_SOURCE[0]}")/restore_results.py" "${args[@]}" || echo "jax-conformance: restore failed; every cell runs"
fi
if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
    "$py" - "$results" >> "$GITHUB_OUTPUT" <<'PY'
import hashlib, pathlib, sys
names = sorted(path.name for path in pathlib.Path(sys.argv[1]).glob("*.json"))
print(f"restored={len(names)} files, {hashlib.sha256(chr(10).join(names).encode()).hexdigest()[:16]}")
PY
fi
exit 0

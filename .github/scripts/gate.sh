#!/usr/bin/env bash
# The gate step of .github/workflows/conformance.yml (and the composite action): compare the candidate
# results with the baseline results (and an expectations file), append the gate's summary to the job's
# summary page, and exit with the gate's status. The tests run this very script.
#
#   BASELINE      folder of baseline result files (no result files there yet: the gate is skipped, status 0)
#   RESULTS       folder of the candidate result files
#   EXPECTATIONS  expectations file (optional)
#   SITE          folder to write gate.md into (default site)
#   PYTHON        the interpreter that has jax-conformance installed (default python)
set -euo pipefail
py="${PYTHON:-python}"
site="${SITE:-site}"
baseline="${BASELINE:?set BASELINE to the folder of baseline result files}"
mkdir -p "$site"
if ! compgen -G "$baseline/*.json" > /dev/null; then
    echo "jax-conformance: no baseline result files in $baseline yet; the gate was skipped"
    if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
        echo "Gate skipped: no baseline result files in \`$baseline\` yet." >> "$GITHUB_STEP_SUMMARY"
    fi
    exit 0
fi
args=(gate --baseline "$baseline" --candidate "${RESULTS:?set RESULTS to the candidate result files}"
      --markdown "$site/gate.md")
if [[ -n "${EXPECTATIONS:-}" ]]; then args+=(--expectations "$EXPECTATIONS"); fi
status=0
"$py" -m conformance "${args[@]}" || status=$?
if [[ -n "${GITHUB_STEP_SUMMARY:-}" && -f "$site/gate.md" ]]; then
    { echo; cat "$site/gate.md"; } >> "$GITHUB_STEP_SUMMARY"
fi
exit "$status"

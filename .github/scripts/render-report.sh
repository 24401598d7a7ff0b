#!/usr/bin/env bash
# The merge job of .github/workflows/conformance.yml (and the composite action): render every result file
# (shards and platforms merge cell by cell) into the HTML report and the Markdown summary, and append the
# summary to the job's summary page. The tests run this very script.
#
#   RESULTS   folder holding every downloaded result file
#   SITE      folder to write index.html and summary.md into (published as the Pages site)
#   PYTHON    the interpreter that has jax-conformance installed (default python)
set -euo pipefail
py="${PYTHON:-python}"
site="${SITE:-site}"
mkdir -p "$site"
"$py" -m conformance report "${RESULTS:?set RESULTS to the folder of result files}" \
    -o "$site/index.html" --markdown "$site/summary.md"
if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
    cat "$site/summary.md" >> "$GITHUB_STEP_SUMMARY"
fi

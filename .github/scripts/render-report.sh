#!/usr/bin/env bash
# The merge job of .github/workflows/conformance.yml (and the composite action): render every result file
# (shards and platforms merge cell by cell) into the HTML report and the Markdown summary, and append the
# summary to the job's summary page. The tests run this very script.
#
# With PUBLISH=1 (the workflow's report job) the result files are first merged into one file per JAX version and
# platform under $SITE/results/ with results/index.json (`publish_results.py` beside this script: the restored
# results of the last run and this run's shard files, a cell run now replacing the restored one), and the report is
# rendered from those: the site carries the data behind its table. With PREVIOUS (the restored results, kept apart),
# `jax-conformance history` appends this run to $SITE/history.json and the report shows what changed since the last
# run (skipped, with a notice, where this checkout has no `history` command). When the restore could not read the
# site's history.json (PREVIOUS/history.json.unread: the site did not answer, not a 404) nothing is published: a new
# history would replace the site's.
#
#   RESULTS   folder holding every downloaded result file (and, in the workflow, the restored ones)
#   SITE      folder to write index.html and summary.md into (published as the Pages site)
#   PUBLISH   1 to publish the merged result files into $SITE/results (optional)
#   PREVIOUS  folder of the last published run's result files and history.json (optional; with PUBLISH)
#   COMMIT    the commit the run checked out (optional; recorded in the index and the history)
#   PYTHON    the interpreter that has jax-conformance installed (default python)
set -euo pipefail
py="${PYTHON:-python}"
site="${SITE:-site}"
results="${RESULTS:?set RESULTS to the folder of result files}"
mkdir -p "$site"
report=()
if [[ "${PUBLISH:-}" == "1" ]]; then
    if [[ -n "${PREVIOUS:-}" && -f "$PREVIOUS/history.json.unread" ]]; then
        # The restore could not read the site's history.json (not a 404): publishing would replace it with a new one.
        why="$(head -c 300 "$PREVIOUS/history.json.unread" | tr -d '\r\n')"
        echo "::error::the site's history.json could not be restored ($why); not publishing, so a new history" \
            "does not replace it"
        exit 1
    fi
    rm -rf "$site/results"
    "$py" "$(dirname "${BASH_SOURCE[0]}")/publish_results.py" "$results" --out "$site/results" --commit "${COMMIT:-}"
    results="$site/results"
    if [[ -n "${PREVIOUS:-}" ]]; then
        if "$py" -m conformance history --help > /dev/null 2>&1; then
            if [[ -f "$PREVIOUS/history.json" ]]; then cp "$PREVIOUS/history.json" "$site/history.json"; fi
            history=(history --previous "$PREVIOUS" --results "$results" --history "$site/history.json")
            if [[ -n "${COMMIT:-}" ]]; then history+=(--commit "$COMMIT"); fi
            if "$py" -m conformance "${history[@]}"; then
                report+=(--history "$site/history.json")
            else  # e.g. a history from a newer suite: kept as it is, and the results and the report still publish
                echo "jax-conformance: history.json was not appended (said above); the report has no 'Since the last run'"
            fi
        else
            echo "jax-conformance: this checkout has no \`history\` command; history.json was not written"
        fi
    fi
fi
"$py" -m conformance report "$results" ${report[@]+"${report[@]}"} \
    -o "$site/index.html" --markdown "$site/summary.md"
if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
    cat "$site/summary.md" >> "$GITHUB_STEP_SUMMARY"
fi

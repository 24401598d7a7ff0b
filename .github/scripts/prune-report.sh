#!/usr/bin/env bash
# Report only: append to the job's summary which entries of the expectations file the run's results no longer need
# (`expectations prune`: entries that match no cell any more, or whose cell now behaves as the chapter documents),
# as the unified diff that would remove them. It never fails the job and never edits the file; a prune that cannot
# read its input says so in the summary. The tests run this very script.
#
#   EXPECTATIONS  the expectations file (empty: nothing to do)
#   RESULTS       folder of the run's result files
#   PYTHON        the interpreter that has jax-conformance installed (default python)
set -uo pipefail
py="${PYTHON:-python}"
summary="${GITHUB_STEP_SUMMARY:-/dev/stdout}"
if [[ -z "${EXPECTATIONS:-}" ]]; then
    exit 0
fi
status=0
out="$("$py" -m conformance expectations prune "$EXPECTATIONS" --results "${RESULTS:?set RESULTS}" 2>&1)" || status=$?
{
    echo
    echo "### Expectations the results no longer need (report only)"
    echo
    if [[ "$status" -ne 0 ]]; then
        echo "\`expectations prune\` could not run (exit $status):"
        echo
    fi
    echo '````diff'
    printf '%s\n' "$out"
    echo '````'
    echo
    echo "Apply it with \`jax-conformance expectations prune $EXPECTATIONS --results DIR --write\`."
} >> "$summary"
exit 0

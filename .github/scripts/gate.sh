#!/usr/bin/env bash
# The gate step of .github/workflows/conformance.yml (and the composite action): compare the candidate
# results with the baseline results (and an expectations file), append the gate's summary to the job's
# summary page, and exit with the gate's status. The tests run this very script.
#
# What the CI gate means: the newest JAX version of the run, on each platform the baseline holds, against
# the baseline (the upgrade a team would take), so a results folder of several versions (`quick latest`)
# is gated by its newest. The run's other platforms are listed as not gated (no baseline for them). A
# baseline platform the run lacks, and baseline cells the run did not select, fail the gate unless
# ALLOW_MISSING=1 accepts them (they are still listed); a gate that compared nothing fails.
#
#   BASELINE      folder of baseline result files (no result files there yet: the gate is skipped, status 0)
#   RESULTS       folder of the candidate result files (any number of versions; the newest per platform is gated)
#   ALLOW_MISSING 1 to accept baseline cells the candidate lacks and platforms on one side only (optional)
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
args=(gate --baseline "$baseline" --candidate "${RESULTS:?set RESULTS to the candidate result files}" --newest
      --baseline-platforms
      --markdown "$site/gate.md")
if [[ "${ALLOW_MISSING:-}" == "1" ]]; then args+=(--allow-missing); fi
if [[ -n "${EXPECTATIONS:-}" ]]; then args+=(--expectations "$EXPECTATIONS"); fi
status=0
"$py" -m conformance "${args[@]}" || status=$?
if [[ -n "${GITHUB_STEP_SUMMARY:-}" && -f "$site/gate.md" ]]; then
    { echo; cat "$site/gate.md"; } >> "$GITHUB_STEP_SUMMARY"
fi
exit "$status"

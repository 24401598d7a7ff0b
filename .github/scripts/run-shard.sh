#!/usr/bin/env bash
# One matrix job of .github/workflows/conformance.yml (and the composite action): run one shard of the
# selected cells against JAX versions (and/or a folder of jax/jaxlib wheel files), writing result files into a
# folder. The tests run this very script.
#
#   JAX              JAX versions and/or matrix names, separated by spaces or commas ("0.12.0.1", "latest", "quick");
#                    optional when WHEELS is set
#   WHEELS           a folder of jax and/or jaxlib wheel files to test as a build of its own (optional)
#   INDEX_URL        the simple index to install from and read releases from (optional; else UV_INDEX_URL, PyPI)
#   EXTRA_INDEX_URL  another simple index, or several separated by spaces (optional)
#   PRE              1 to allow pre-releases and dev builds (optional)
#   SHARD            K/N to run shard K of N (optional: all selected cells)
#   RESULTS          folder for the result files (default results)
#   SELECT           a -k expression (optional)
#   CASES            a folder of the team's own cases (optional)
#   WORKERS          cells at once (optional; default the number of cores)
#   PYTHON           the interpreter that has jax-conformance installed (default python)
set -euo pipefail
py="${PYTHON:-python}"
results="${RESULTS:-results}"
index=()
if [[ -n "${INDEX_URL:-}" ]]; then index+=(--index-url "$INDEX_URL"); fi
for url in ${EXTRA_INDEX_URL:-}; do index+=(--extra-index-url "$url"); done
if [[ "${PRE:-}" == "1" ]]; then index+=(--pre); fi
if [[ -z "${JAX:-}" && -z "${WHEELS:-}" ]]; then
    echo "set JAX to versions or a matrix name, or WHEELS to a folder of wheel files" >&2
    exit 2
fi
args=(run --results "$results")
if [[ -n "${JAX:-}" ]]; then
    versions="$("$py" -m conformance matrix "$JAX" ${index[@]+"${index[@]}"} | tr -d '\r')"
    for version in $versions; do
        args+=(--jax "$version")
    done
fi
if [[ -n "${WHEELS:-}" ]]; then args+=(--wheels "$WHEELS"); fi
if [[ -n "${SHARD:-}" ]]; then args+=(--shard "$SHARD"); fi
if [[ -n "${SELECT:-}" ]]; then args+=(-k "$SELECT"); fi
if [[ -n "${CASES:-}" ]]; then args+=(--cases "$CASES"); fi
if [[ -n "${WORKERS:-}" ]]; then args+=(-j "$WORKERS"); fi
args+=(${index[@]+"${index[@]}"})
# The command line, its URLs' credentials (user:TOKEN@, to the netloc's last @) masked by the suite's one scrubber:
# GitHub masks registered secrets only, not a token minted in the job.
"$py" -m conformance.scrub --command jax-conformance "${args[@]}"
exec "$py" -m conformance "${args[@]}"

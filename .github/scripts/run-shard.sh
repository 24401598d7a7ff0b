#!/usr/bin/env bash
# One matrix job of .github/workflows/conformance.yml (and the composite action): run one shard of the
# selected cells against JAX versions, writing result files into a folder. The tests run this very script.
#
#   JAX       JAX versions and/or matrix names, separated by spaces or commas ("0.12.0.1", "latest", "quick")
#   SHARD     K/N to run shard K of N (optional: all selected cells)
#   RESULTS   folder for the result files (default results)
#   SELECT    a -k expression (optional)
#   CASES     a folder of the team's own cases (optional)
#   WORKERS   cells at once (optional; default the number of cores)
#   PYTHON    the interpreter that has jax-conformance installed (default python)
set -euo pipefail
py="${PYTHON:-python}"
results="${RESULTS:-results}"
versions="$("$py" -m conformance matrix "${JAX:?set JAX to versions or a matrix name}" | tr -d '\r')"
args=(run --results "$results")
for version in $versions; do
    args+=(--jax "$version")
done
if [[ -n "${SHARD:-}" ]]; then args+=(--shard "$SHARD"); fi
if [[ -n "${SELECT:-}" ]]; then args+=(-k "$SELECT"); fi
if [[ -n "${CASES:-}" ]]; then args+=(--cases "$CASES"); fi
if [[ -n "${WORKERS:-}" ]]; then args+=(-j "$WORKERS"); fi
echo "+ jax-conformance ${args[*]}"
exec "$py" -m conformance "${args[@]}"

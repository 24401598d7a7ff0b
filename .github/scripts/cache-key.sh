#!/usr/bin/env bash
# The composite action's cache key part for the index: a hash of INDEX_URL without its credentials (user:TOKEN@),
# so the key (listed to anyone with read access) never holds a token, and a rotated token keeps the cache.
# Writes `index=<hash>` to $GITHUB_OUTPUT, or to stdout without it. The tests run this very script.
#
#   INDEX_URL  the index-url input (optional: empty gives the hash of the empty string)
#   PYTHON     the interpreter (default python); the suite need not be installed: its scrubber is standard library
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
# Without credentials by the suite's one scrubber (conformance/scrub.py), which splits at the netloc's last @.
bare="$(printf '%s' "${INDEX_URL:-}" | PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" "${PYTHON:-python}" -m conformance.scrub --url)"
if command -v sha256sum > /dev/null; then digest="$(printf '%s' "$bare" | sha256sum)"
else digest="$(printf '%s' "$bare" | shasum -a 256)"; fi
echo "index=${digest:0:16}" >> "${GITHUB_OUTPUT:-/dev/stdout}"

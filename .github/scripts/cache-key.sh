#!/usr/bin/env bash
# The composite action's cache key part for the index: a hash of INDEX_URL without its credentials (user:TOKEN@),
# so the key (listed to anyone with read access) never holds a token, and a rotated token keeps the cache.
# Writes `index=<hash>` to $GITHUB_OUTPUT, or to stdout without it. The tests run this very script.
#
#   INDEX_URL  the index-url input (optional: empty gives the hash of the empty string)
set -euo pipefail
bare="$(printf '%s' "${INDEX_URL:-}" | sed -E 's#(://)[^/@[:space:]]*@#\1#g')"
if command -v sha256sum > /dev/null; then digest="$(printf '%s' "$bare" | sha256sum)"
else digest="$(printf '%s' "$bare" | shasum -a 256)"; fi
echo "index=${digest:0:16}" >> "${GITHUB_OUTPUT:-/dev/stdout}"

"""Credentials out of URLs: the one scrubber for every URL the suite, and its workflow scripts, print or hash.

A mirror's URL may carry `user:TOKEN@`, and the token may hold an unencoded `@` or `:` (uv and urllib split the
netloc at its *last* `@`), or an encoded one (`%40`). Printed text keeps the shape of the URL and masks the part
before that last `@` (`https://***@host/simple`); a URL that is recorded or hashed (a result header, a cache key)
drops it (`https://host/simple`), so a rotated token changes nothing. Standard library only: the workflow scripts run
it before the suite's dependencies are installed.

    python -m conformance.scrub          # stdin to stdout, every URL's credentials masked (for a log line)
    python -m conformance.scrub --url    # each line of stdin as a URL without its credentials (for a hash)
"""

from __future__ import annotations

import re
import sys
import urllib.parse

MASK = "***"
# A scheme, then the netloc up to its last `@` (no `/`, `?`, `#` or space before it): the user information.
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s]*@")


def without_credentials(url: str) -> str:
    """`url` without a user name or password (`https://token@mirror/simple` → `https://mirror/simple`), as it may be
    recorded in a result file, hashed into a cache key or shown."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _secrets(url: str) -> list[str]:
    """The user information of `url` and its parts, as written and percent-decoded, longest first."""
    userinfo = _USERINFO.match(url)
    if not userinfo:
        return []
    whole = userinfo.group(0)[len(userinfo.group(1)):-1]
    found = {whole, *whole.split(":", 1)}
    found |= {urllib.parse.unquote(piece) for piece in found}
    return sorted((s for s in found if len(s) > 2), key=len, reverse=True)


def scrub_credentials(text: str, *urls: str) -> str:
    """`text` with the user information of every URL in it masked (`https://***@host`), and every secret of `urls`
    (the URLs the text is about) masked wherever it appears: a library's message may quote the netloc without its
    scheme (`nonnumeric port: 'TOKEN@host'`)."""
    for url in urls:
        for secret in _secrets(url):
            text = text.replace(secret, MASK)
    return _USERINFO.sub(rf"\g<1>{MASK}@", text)


def main(argv: list[str] | None = None) -> int:
    """Filter stdin to stdout: masked text, or with `--url` each line as a URL without its credentials."""
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--url"]):
        print("usage: python -m conformance.scrub [--url] < text", file=sys.stderr)
        return 2
    text = sys.stdin.read()
    if args == ["--url"]:
        sys.stdout.write("\n".join(without_credentials(line) for line in text.split("\n")))
    else:
        sys.stdout.write(scrub_credentials(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Credentials out of URLs: the one scrubber for every URL the suite, and its workflow scripts, print or hash.

A mirror's URL may carry `user:TOKEN@`, and the token may hold an unencoded `@` or `:` (uv and urllib split the
netloc at its *last* `@`), or an encoded one (`%40`). Printed text keeps the shape of the URL and masks the part
before that last `@` (`https://***@host/simple`); a URL that is recorded or hashed (a result header, a cache key)
drops it (`https://host/simple`), so a rotated token changes nothing. Standard library only: the workflow scripts run
it before the suite's dependencies are installed.

`mask_secrets` masks, in what a child wrote (a block's output, a probe's facts) before it is stored, every
credential the parent knows (`conformance.childenv.known_secrets`: the values of the variables no child is given,
and the user information of URLs) as well as any URL's user information.

    python -m conformance.scrub          # stdin to stdout, every URL's credentials masked (for a log line)
    python -m conformance.scrub --url    # each line of stdin as a URL without its credentials (for a hash)
    python -m conformance.scrub --command jax-conformance ARG...   # the command line, each URL argument masked
"""

from __future__ import annotations

import re
import shlex
import sys
import urllib.parse
from typing import Any, Sequence

MASK = "***"
# A scheme (`https:`, then its slashes; uv also takes one slash or backslashes), then the netloc up to its last `@`
# (no `/`, `?`, `#` or space before it): the user information of a URL found in free text.
_SCHEME = r"[A-Za-z][A-Za-z0-9+.-]*:[/\\]+"
_USERINFO = re.compile(rf"({_SCHEME})[^/?#\s]*@")


def _split_known(url: str) -> tuple[str, str, str] | None:
    """A URL known to be one (an option's value) as (scheme and slashes, user information, the rest), its user
    information taken up to its *last* `@`: a password may hold a space, `#`, `?` or `:` that uv accepts. None when it
    has no user information (no `@`, or only after a `/` of its path)."""
    scheme = re.match(_SCHEME, url)
    if not scheme:
        return None
    rest = url[scheme.end() :]
    userinfo, at, after = rest.rpartition("@")
    if not at or "/" in userinfo or "\\" in userinfo:  # an `@` of the path, not of the netloc
        return None
    return scheme.group(0), userinfo, after


def without_credentials(url: str) -> str:
    """`url` without a user name or password (`https://token@mirror/simple` → `https://mirror/simple`), as it may be
    recorded in a result file, hashed into a cache key or shown."""
    split = _split_known(url)
    return url if split is None else split[0] + split[2]


def url_secrets(url: str) -> list[str]:
    """The user information of `url` and its parts, as written and percent-decoded, longest first."""
    split = _split_known(url)
    if split is None:
        return []
    whole = split[1]
    found = {whole, *whole.split(":", 1)}
    found |= {urllib.parse.unquote(piece) for piece in found}
    return sorted((s for s in found if len(s) > 2), key=len, reverse=True)


def scrub_credentials(text: str, *urls: str) -> str:
    """`text` with the user information of every URL in it masked (`https://***@host`), and every secret of `urls`
    (the URLs the text is about) masked wherever it appears: a library's message may quote the netloc without its
    scheme (`nonnumeric port: 'TOKEN@host'`), and a password holding a space or `#` is only found from its URL."""
    for url in urls:
        for secret in url_secrets(url):
            text = text.replace(secret, MASK)
    return _USERINFO.sub(rf"\g<1>{MASK}@", text)


def mask_secrets(value: Any, secrets: Sequence[str]) -> Any:
    """`value` (text, or JSON data: dicts, lists, strings) with every secret of `secrets` masked in each string, and
    the user information of every URL in it masked (`scrub_credentials`): what a child wrote (a block's output, a
    probe's facts, exception text) before it is stored. Keys are masked too; other values are kept."""
    if isinstance(value, str):
        for secret in secrets:
            if secret:
                value = value.replace(secret, MASK)
        return _USERINFO.sub(rf"\g<1>{MASK}@", value)
    if isinstance(value, dict):
        return {
            mask_secrets(k, secrets) if isinstance(k, str) else k: mask_secrets(v, secrets) for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [mask_secrets(item, secrets) for item in value]
    return value


def scrub_url(url: str) -> str:
    """A URL (an option's value, known to be one) for printing: its user information masked however it is written."""
    return scrub_credentials(url, url)


URL_OPTIONS = ("--index-url", "--extra-index-url", "--find-links", "--default-index", "--index")


def _cut_password_tail(argument: str, previous: str) -> bool:
    """Whether `argument`, the value of an index option, is the back half of a URL that a list split at a space cut
    in two (`TOKEN@host/simple`: no scheme, user information before the host)."""
    return previous in URL_OPTIONS and not re.match(_SCHEME, argument) and "@" in argument.split("/", 1)[0]


def _masked_argument(argument: str, previous: str, cut_after: bool = False) -> str:
    """One argument of a command line as it may be printed: a URL's user information masked; the value of an index
    option too when it has no scheme (a list split at a space may cut a password in two: `TOKEN@host/simple`), and
    the front half of such a cut (`cut_after`: the next index option's value is the back half), all after its
    scheme, since what follows `//` there is the user and the first part of the password."""
    scheme = re.match(_SCHEME, argument)
    if scheme:
        return scheme.group(0) + MASK if cut_after and previous in URL_OPTIONS else scrub_url(argument)
    if _cut_password_tail(argument, previous):
        return f"{MASK}@{argument.split('/', 1)[0].rpartition('@')[2]}" + (
            "/" + argument.split("/", 1)[1] if "/" in argument else ""
        )
    return argument


def main(argv: list[str] | None = None) -> int:
    """Filter stdin to stdout: masked text; with `--url`, each line as a URL without its credentials; with
    `--command WORD ARG...`, print `+ WORD ARG...` with each argument that is a URL masked (a workflow script's echo of
    the command it runs: each argument is known, so a password holding a space is masked whole)."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--command"] and len(args) > 1:
        words = args[2:]
        shown = [
            _masked_argument(
                arg, words[i - 1] if i else "", i + 2 < len(words) and _cut_password_tail(words[i + 2], words[i + 1])
            )
            for i, arg in enumerate(words)
        ]
        print(
            "+ "
            + " ".join(
                [args[1], *(shlex.quote(arg) if re.search(r"[\s'\"\\$`;|&<>()]", arg) else arg for arg in shown)]
            )
        )
        return 0
    if args not in ([], ["--url"]):
        print("usage: python -m conformance.scrub [--url] < text | --command WORD ARG...", file=sys.stderr)
        return 2
    text = sys.stdin.read()
    if args == ["--url"]:
        sys.stdout.write("\n".join(without_credentials(line) for line in text.split("\n")))
    else:
        sys.stdout.write(scrub_credentials(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What every output of the report shares: the order of its status columns, and text made safe to show. Pure logic."""

from __future__ import annotations

import re
from urllib.parse import quote, urljoin

from conformance.core.status import Status
from conformance.report.model import NOT_RUN

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
STATUS_ORDER = [s.value for s in Status] + [NOT_RUN]


def visible(text: str) -> str:
    """`text` safe to render and to encode: control characters and lone surrogates shown as escapes."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def page_address(html_link: str, site_url: str = "") -> str:
    """Where the HTML page is, as the outputs link to it: `html_link` (`index.html` by default), made absolute against
    `site_url` when one is given (a link that still works once the Markdown is pasted elsewhere)."""
    if not site_url:
        return html_link
    return urljoin(site_url if site_url.endswith("/") else site_url + "/", html_link)


def cell_address(page: str, cell_id: str, jax: str, platform: str = "") -> str:
    """The page's address of one cell's panel, in the page's own URL state (`#cell=ID&at=VERSION`, `VERSION@PLATFORM`
    in a report of several platforms)."""
    at = f"{jax}@{platform}" if platform else jax
    return f"{page}#cell={quote(cell_id, safe='')}&at={quote(at, safe='')}"

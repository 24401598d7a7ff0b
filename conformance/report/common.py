"""What every output of the report shares: the order of its status columns, and text made safe to show. Pure logic."""

from __future__ import annotations

import re

from conformance.core.status import Status
from conformance.report.model import NOT_RUN

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
STATUS_ORDER = [s.value for s in Status] + [NOT_RUN]


def visible(text: str) -> str:
    """`text` safe to render and to encode: control characters and lone surrogates shown as escapes."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")

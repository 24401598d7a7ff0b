"""A small renderer of BCD compat data, following the rules MDN's compatibility tables show it by, to see what a BCD
reader sees of the compat JSON (issue 47). Per feature a row, per browser (here a JAX platform) a cell: the first
statement (the newest) decides the cell, "Yes" with its `version_added`, "Partial" with `partial_implementation`,
"No" for `version_added: false`, and a range "0.4.38 – 0.7.1" with "Removed in 0.8.0" where `version_removed` is
given; every statement of an array is listed under it (MDN's history), each with its notes.

    python -m tests.bcd_render COMPAT.json FEATURE.PATH OUT.html
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path
from typing import Any


def statement_text(statement: dict[str, Any]) -> str:
    """One support statement as MDN words it: `Yes ≤0.4.38`, `Partial 0.8.0`, `No`, `0.4.38 – 0.7.1 (removed in
    0.8.0)`."""
    added = statement.get("version_added")
    if added is False or added is None:
        return "No"
    word = "Partial" if statement.get("partial_implementation") else "Yes"
    if statement.get("version_removed"):
        last = statement.get("version_last", "?")
        return f"{word} {added} – {last} (removed in {statement['version_removed']})"
    return f"{word} {added}"


def features(tree: dict[str, Any], path: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every feature under `tree` with its dotted path, depth first, as BCD nests them."""
    found = []
    if "__compat" in tree:
        found.append((path, tree["__compat"]))
    for key, value in tree.items():
        if not key.startswith("__") and isinstance(value, dict):
            found += features(value, f"{path}.{key}" if path else key)
    return found


def render(data: dict[str, Any], where: str) -> str:
    """The table of the features at and under `where` (`jax.numerics.debug_nans.vmap_miss`), as HTML."""
    node: dict[str, Any] = data
    for part in where.split("."):
        node = node[part]
    browsers = list(data["browsers"])
    rows = []
    for path, compat in features(node, where):
        cells = []
        for browser in browsers:
            support = compat["support"].get(browser)
            statements = support if isinstance(support, list) else [support] if support else []
            if not statements:
                cells.append("<td>?</td>")
                continue
            first = statement_text(statements[0])
            kind = (
                "no"
                if first == "No"
                else "partial"
                if first.startswith("Partial")
                else "removed"
                if "removed" in first
                else "yes"
            )
            history = "".join(
                f"<li><b>{html.escape(statement_text(s))}</b>"
                + "".join(
                    f"<div class='note'>{n}</div>"
                    for n in ([s["notes"]] if isinstance(s.get("notes"), str) else s.get("notes", []))
                )
                + "</li>"
                for s in statements
            )
            cells.append(f"<td class='{kind}'><div class='cell'>{html.escape(first)}</div><ul>{history}</ul></td>")
        rows.append(
            f"<tr><th><code>{html.escape(path)}</code><div class='desc'>{html.escape(compat['description'])}"
            f"</div></th>{''.join(cells)}</tr>"
        )
    head = "".join(f"<th>{html.escape(data['browsers'][b]['name'])}</th>" for b in browsers)
    return (
        "<!DOCTYPE html><html lang='en'><meta charset='utf-8'><title>BCD rendering</title><style>"
        "body{font:14px system-ui,sans-serif;margin:1rem} table{border-collapse:collapse} th,td{border:1px solid "
        "#ccc;padding:.4rem;vertical-align:top;text-align:left;max-width:40rem} "
        ".desc{font-weight:normal;color:#333}"
        " .yes{background:#e6f4ea} .no{background:#fce8e6} .partial{background:#fef7e0} .removed{background:#eee}"
        " .cell{font-weight:700;font-size:15px} .note{font-size:12px;color:#444;margin:.2rem 0} "
        "ul{padding-left:1rem;"
        "margin:.3rem 0}</style><h1>Compatibility table (BCD's rules)</h1>"
        f"<p>{html.escape(where)}</p><table><tr><th>feature</th>{head}</tr>{''.join(rows)}</table></html>"
    )


if __name__ == "__main__":
    compat, where, out = sys.argv[1:4]
    Path(out).write_text(render(json.loads(Path(compat).read_text(encoding="utf-8")), where), encoding="utf-8")
    print(out)

"""The public JSON of a chapter's run (`jax-conformance chapter FILE --json PATH`; docs/chapters.md). Pure.

```json
{"format": "jax-conformance chapter", "format_version": 1, "chapter": "000_074f18c932eb1ee6",
 "path": "../shared/seeds/000_074f18c932eb1ee6.txt", "form": "text", "platform": "linux-x86_64",
 "versions": ["0.4.38", "0.12.0.1"],
 "blocks": [{"id": "s1_1_3f8ed446", "cell": "chapter/ch000_074f18c932eb1ee6.s1_1_3f8ed446", "index": 2,
             "heading": "1.1 jax.debug.print", "section": "1.1", "line": 183, "end_line": 192,
             "hash": "3f8ed446600d89ef", "first_code": "@jax.jit",
             "status": {"0.4.38": "ran", "0.12.0.1": "ran"},
             "detail": {"0.4.38": "", "0.12.0.1": ""},
             "printed_differs": {"0.4.38": true, "0.12.0.1": false}}]}
```

`id`, `heading`, `line`, `hash`, `status` and `detail` are the interface the issue named; the other keys are added
(a reader ignores keys it does not know). `versions` are in PEP 440 order; a block has an entry for every version.
`status` is the block's own word (`ran`, `raised_as_documented`, `assert_failed`, `raised`, `raised_otherwise`,
`did_not_raise`, `timeout`, `crash`, `skipped`, `listing`, `interactive`, `after_failure`); `detail` what decided
it (the failed assert and its line, the exception, its line and the first line of its message, what the page
states, the missing name and the block that should have defined it, the skip reason), then what explains it (a
callback's own error, a flag an earlier block left set) and the notes (`magic not run: %xmode`, `the page says:
...`); '' for a block that `ran` with nothing to note.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from conformance.chapter.cells import block_status, case_id
from conformance.chapter.model import BlockStatus, Chapter
from conformance.results.schema import CellResult
from conformance.results.versions import version_order

FORMAT, FORMAT_VERSION = "jax-conformance chapter", 1


def chapter_json(chapter: Chapter, cells: Mapping[str, Mapping[str, CellResult]], platform: str) -> dict[str, Any]:
    """The document (see the module's docstring) from each version's cells by block id."""
    versions = sorted(cells, key=version_order)
    blocks = []
    for block in chapter.blocks:
        status: dict[str, str] = {}
        detail: dict[str, str] = {}
        printed: dict[str, bool] = {}
        for version in versions:
            cell = cells[version].get(block.id)
            found = block_status(cell) if cell is not None else None
            status[version] = (found or BlockStatus.CRASH).value if cell is not None else "not run"
            detail[version] = cell.reason if cell is not None else ""
            printed[version] = bool(cell is not None and cell.printed_differs)
        blocks.append(
            {
                "id": block.id,
                "cell": case_id(chapter, block),
                "index": block.index + 1,
                "heading": block.heading.text,
                "section": block.section,
                "line": block.line,
                "end_line": block.end_line,
                "hash": block.hash,
                "first_code": block.first_code,
                "status": status,
                "detail": detail,
                "printed_differs": printed,
            }
        )
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "chapter": chapter.name,
        "path": chapter.path,
        "form": chapter.form,
        "platform": platform,
        "versions": versions,
        "blocks": blocks,
    }


def dumps(document: Mapping[str, Any]) -> str:
    """The document as written: one block per line, so a new run is a readable diff."""
    head = {k: v for k, v in document.items() if k != "blocks"}
    text = json.dumps(head, ensure_ascii=False)[:-1] + ', "blocks": [\n'
    text += ",\n".join(json.dumps(block, ensure_ascii=False) for block in document["blocks"])
    return text + "\n]}\n"

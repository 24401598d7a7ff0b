"""Reading a Jupyter notebook (`.ipynb`) chapter into raw blocks, with `nbformat`. Pure apart from parsing text.

- Each code cell is a block; its `line` is the cell's number (1-based, counting every cell).
- Its tags: `raises-exception` (the cell is expected to raise: any exception, or the one a `# ==> raises X`
  comment names) and `skip-execution` (not run).
- Its stored outputs are what the document shows: `stream` outputs to stdout, and the `text/plain` of an
  `execute_result` (the value of the cell's last expression, displayed). A cell that was never executed (no
  execution count and no outputs) states nothing and is not compared.
- Headings come from the Markdown cells' `#` lines.
- IPython's line magics and shell escapes (`%matplotlib inline`, `!pip install ...`) are not Python; they run as
  `pass` (the block's hash is still that of the cell as written).
"""

from __future__ import annotations

import re

from conformance.chapter.blocks import stated_raise
from conformance.chapter.headings import next_heading
from conformance.chapter.model import Heading
from conformance.errors import ConformanceError

_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def _text(value: object) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def _table(value: object, what: str) -> dict:
    """`value` when it is a JSON object (None: an empty one); else a one-line `ConformanceError` naming `what`."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConformanceError(f"{what} should be a JSON object, not {value!r}: fix or remove it in the notebook")
    return value


def _shown(outputs: list) -> tuple[str, bool]:
    """What the cell's stored outputs show on stdout, and whether one is its displayed value."""
    parts, displayed = [], False
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream" and output.get("name") == "stdout":
            parts.append(_text(output.get("text")))
        elif kind == "execute_result":
            plain = _text((output.get("data") or {}).get("text/plain"))
            parts.append(plain + ("\n" if plain and not plain.endswith("\n") else ""))
            displayed = True
    return "".join(parts), displayed


def read_notebook(text: str) -> list[dict]:
    """The raw blocks of a notebook's text (see the module's docstring); `ConformanceError` when it is not one."""
    try:
        import nbformat
    except ImportError:
        raise ConformanceError(
            "reading a notebook needs nbformat (a dependency of jax-conformance): pip install nbformat"
        ) from None
    try:
        notebook = nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat raises its own errors, JSON's and validation's: all say "not a notebook"
        raise ConformanceError(
            f"not a Jupyter notebook ({type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0][:200]})"
        ) from None
    kernelspec = _table(
        _table(notebook.get("metadata"), "the notebook's metadata").get("kernelspec"),
        "the notebook's metadata.kernelspec",
    )
    language = str(kernelspec.get("language") or "python")
    if language.lower() != "python":
        raise ConformanceError(f"the notebook's kernel runs {language}, not Python")
    raw: list[dict] = []
    heading = Heading()
    for number, cell in enumerate(notebook.get("cells") or [], 1):
        source = _text(cell.get("source"))
        if cell.get("cell_type") == "markdown":
            for line in source.splitlines():
                found = _HEADING.match(line)
                if found:
                    heading = next_heading(heading, found.group(1))
            continue
        if cell.get("cell_type") != "code":
            continue
        tags = (cell.get("metadata") or {}).get("tags") or []
        if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
            raise ConformanceError(
                f"cell {number} of the notebook: metadata.tags should be a list of strings "
                f'("tags": ["raises-exception"]), not {tags!r}'
            )
        outputs = list(cell.get("outputs") or [])
        shown, displayed = _shown(outputs)
        executed = cell.get("execution_count") is not None or bool(outputs)
        raises = stated_raise(source) or ("*" if "raises-exception" in tags else "")
        raw.append(
            {
                "code": source,
                "line": number,
                "end_line": number,
                "heading": heading,
                "output": shown,
                "joined": False,
                "output_known": executed,
                "output_line": number,
                "raises": raises,
                "skip": "tagged skip-execution in the notebook" if "skip-execution" in tags else "",
                "shows_value": displayed,
            }
        )
    return raw

"""docs/python-api.md (issue 60): every name its table calls stable exists where it says, and its worked example
runs as written (against the fixture cases and result files it writes itself; no JAX needed)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "python-api.md"


def stable_names(text: str) -> list[tuple[str, str]]:
    """(module, name) of every row of the page's table of stable names."""
    found = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`conformance."):
            module = cells[0].strip("`")
            found += [(module, name) for name in re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", cells[1])]
    return found


def python_blocks(text: str) -> list[str]:
    """The page's ```python blocks."""
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_the_table_lists_names_and_the_reader_sees_them():
    names = stable_names(PAGE.read_text(encoding="utf-8"))
    assert ("conformance.engine.matrix", "RunSettings") in names and len(names) > 40
    assert stable_names("| `conformance.x` | `A`, `b_c` | z |\n| module | names | what |") == [
        ("conformance.x", "A"),
        ("conformance.x", "b_c"),
    ]


@pytest.mark.parametrize("module,name", stable_names(PAGE.read_text(encoding="utf-8")))
def test_every_stable_name_exists_where_the_page_says(module, name):
    assert hasattr(importlib.import_module(module), name)


def test_the_worked_example_runs(monkeypatch, capsys):
    (block,) = python_blocks(PAGE.read_text(encoding="utf-8"))
    monkeypatch.chdir(ROOT)  # the example runs from a clone's root
    exec(compile(block, str(PAGE), "exec"), {"__name__": "python_api_example"})  # noqa: S102 - the doc's own code
    assert capsys.readouterr().out.strip() == "gate (linux-x86_64: jax 0.4.38 -> 0.5.0)"

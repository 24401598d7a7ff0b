"""End to end (issue 37): a small Markdown chapter and a small notebook, written here, run as written on two real
releases through the CLI, each block's status checked, then answered from storage and compared with `diff`.

The releases' environments are built with the project's builder from the package index (`e2e`; slow: minutes),
from an empty environment cache as `.ci/run` gives it (`JAX_CONFORMANCE_CACHE`, a fresh folder): nothing an earlier
run left under `~/.cache/jax-conformance` is read, and the results folder is the test's own.
0.4.38 and 0.12.0.1 differ in a way the chapters assert: a jaxpr prints a literal with its type (`2.0:f32[]`) on
0.12.0.1 only (`2.0` on 0.4.38), so that assert fails on the old release only, and the printed jaxpr differs there.
"""

from __future__ import annotations

import json

import pytest

from conformance import cli
from conformance.chapter.read import read_chapter

pytestmark = pytest.mark.e2e

OLD, NEW = "0.4.38", "0.12.0.1"
# The block that never ends gets a time limit of its own (the skip list's [[limit]]); the others keep the default
# (300 s): on a busy machine the first block, which imports jax and starts its backend, can take a minute.
FOREVER_LIMIT = """
[[limit]]
heading = "4.1"
index = 1
seconds = 15
"""

SETUP = "import jax\nimport jax.numpy as jnp\nprint(jnp.arange(3.0))"
TYPED_LITERAL = 'jaxpr_text = str(jax.make_jaxpr(lambda x: x * 2.0)(1.0))\nassert "2.0:f32[]" in jaxpr_text'
PRINTED_JAXPR = "print(jax.make_jaxpr(lambda x: x + 1.0)(1.0))"
JAXPR_SHOWN = "{ lambda ; a:f32[]. let b:f32[] = add a 1.0:f32[] in (b,) }"
RESHAPE = "jnp.ones(4).reshape(3, 5)"
NEEDS_SCALE = "print(jnp.ones(2) * scale)"
FOREVER = "while True:\n    pass"
AFTER_WAIT = 'print("after the wait")'
BREAKPOINT = "jax.debug.breakpoint()"

MARKDOWN = f"""# A small chapter for the tests

## 1.1 Setup

```python
{SETUP}
# Prints:
# [0. 1. 2.]
```

## 2.1 What changed

```python
{TYPED_LITERAL}
```

```python
{PRINTED_JAXPR}
# Prints:
# {JAXPR_SHOWN}
```

## 3.1 Errors

```python
{RESHAPE}
```

```python
{RESHAPE}  # ==> raises TypeError
```

```python
scale = float("two")
```

```python
{NEEDS_SCALE}
```

## 4.1 Waiting

```python
{FOREVER}
```

```python
{AFTER_WAIT}
# Prints:
# after the wait
```

## 5.1 Interactive

```python
{BREAKPOINT}
```
"""

# What each block of the Markdown chapter is, on each release.
EXPECTED = {
    OLD: [
        "ran",
        "assert_failed",
        "ran",
        "raised",
        "raised_as_documented",
        "raised",
        "after_failure",
        "timeout",
        "ran",
        "skipped",
    ],
    NEW: [
        "ran",
        "ran",
        "ran",
        "raised",
        "raised_as_documented",
        "raised",
        "after_failure",
        "timeout",
        "ran",
        "skipped",
    ],
}


def notebook_text() -> str:
    nbformat = pytest.importorskip("nbformat")
    v4 = nbformat.v4

    def code(source, shown=None, value=None, tags=()):
        outputs = [v4.new_output("stream", name="stdout", text=shown)] if shown is not None else []
        if value is not None:
            outputs.append(v4.new_output("execute_result", data={"text/plain": value}, execution_count=1))
        return v4.new_code_cell(source, execution_count=1, outputs=outputs, metadata={"tags": list(tags)})

    notebook = v4.new_notebook(
        metadata={"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}}
    )
    notebook.cells = [
        v4.new_markdown_cell("# A small notebook\n\n## 1.1 Setup"),
        code(SETUP, "[0. 1. 2.]\n"),
        code("jnp.arange(3) + 1", value="Array([1, 2, 3], dtype=int32)"),
        v4.new_markdown_cell("## 2.1 What changed"),
        code(TYPED_LITERAL),
        code(PRINTED_JAXPR, JAXPR_SHOWN + "\n"),
        v4.new_markdown_cell("## 3.1 Errors"),
        code(RESHAPE, tags=["raises-exception"]),
        code("scale = float('two')"),
        code(NEEDS_SCALE),
        code("[1, 2][5]"),
        v4.new_markdown_cell("## 4.1 Waiting"),
        code(FOREVER),
        code(AFTER_WAIT, "after the wait\n"),
        v4.new_markdown_cell("## 5.1 Interactive"),
        code(BREAKPOINT, tags=["skip-execution"]),
    ]
    return nbformat.writes(notebook)


NOTEBOOK_EXPECTED = {
    OLD: [
        "ran",
        "ran",
        "assert_failed",
        "ran",
        "raised_as_documented",
        "raised",
        "after_failure",
        "raised",
        "timeout",
        "ran",
        "skipped",
    ],
    NEW: [
        "ran",
        "ran",
        "ran",
        "ran",
        "raised_as_documented",
        "raised",
        "after_failure",
        "raised",
        "timeout",
        "ran",
        "skipped",
    ],
}


def run_chapter(path, results, out, capsys, *extra):
    capsys.readouterr()
    status = cli.main(
        ["chapter", str(path), "--jax", OLD, "--jax", NEW, "--results", str(results), "--json", str(out), *extra]
    )
    printed = capsys.readouterr()
    assert status == 0, printed.err
    return json.loads(out.read_text(encoding="utf-8")), printed.out


def statuses(document, version):
    return [block["status"][version] for block in document["blocks"]]


def test_the_markdown_chapter_runs_as_written_on_two_releases_and_is_answered_from_storage(tmp_path, capsys):
    chapter = tmp_path / "small.md"
    chapter.write_text(MARKDOWN, encoding="utf-8")
    skip = (
        '[[skip]]\nheading = "5.1"\nindex = 1\nreason = "needs an interactive terminal: jax.debug.breakpoint() '
        'waits for commands"\n'
    )
    (tmp_path / "small.skip.toml").write_text(skip + FOREVER_LIMIT, encoding="utf-8")
    results = tmp_path / "results"
    document, out = run_chapter(chapter, results, tmp_path / "small.json", capsys)
    assert document["versions"] == [OLD, NEW]
    assert {v: statuses(document, v) for v in (OLD, NEW)} == EXPECTED
    blocks = document["blocks"]
    assert blocks[1]["detail"][OLD] == 'line 2: assert "2.0:f32[]" in jaxpr_text'
    assert [b["printed_differs"] for b in blocks[:3]] == [
        {OLD: False, NEW: False},
        {OLD: False, NEW: False},
        {OLD: True, NEW: False},
    ]
    assert blocks[3]["detail"][NEW].startswith("line 1: TypeError: cannot reshape array")
    assert blocks[4]["detail"][NEW] == "raised as the page states: line 1: TypeError"
    assert blocks[6]["detail"][NEW] == (
        f"NameError: name 'scale' is not defined (block {blocks[5]['id']} should have defined it)"
    )
    assert blocks[7]["detail"][NEW] == "ran past its time limit of 15s"
    assert blocks[9]["detail"][NEW].startswith("needs an interactive terminal")
    assert f"jax {OLD}: 4 of 9 blocks run as written (1 skipped;" in out
    # stored as cells beside the probes' (none here): reused whole while nothing changed
    for version in (OLD, NEW):
        stored = json.loads((results / f"{version}-linux-x86_64.json").read_text(encoding="utf-8"))
        assert {t["metadata"]["case"] for t in stored["tests"]} == {b["cell"] for b in blocks}
    again, out = run_chapter(chapter, results, tmp_path / "again.json", capsys)
    assert "(stored results)" in out and "running" not in out
    assert [b["status"] for b in again["blocks"]] == [b["status"] for b in blocks]
    # the decisions read blocks like any cell
    capsys.readouterr()
    assert cli.main(["diff", str(results / f"{OLD}-linux-x86_64.json"), str(results / f"{NEW}-linux-x86_64.json")]) == 0
    assert blocks[1]["cell"] in capsys.readouterr().out
    # an edited block is a new block: its old cell goes, the blocks after it run again
    chapter.write_text(MARKDOWN.replace(TYPED_LITERAL, TYPED_LITERAL + "  # edited"), encoding="utf-8")
    edited = read_chapter(chapter)
    assert edited.blocks[1].id != blocks[1]["id"] and edited.blocks[0].id == blocks[0]["id"]


def test_the_notebook_runs_as_written_on_two_releases(tmp_path, capsys):
    chapter = tmp_path / "small.ipynb"
    chapter.write_text(notebook_text(), encoding="utf-8")
    (tmp_path / "small.skip.toml").write_text(FOREVER_LIMIT, encoding="utf-8")
    document, _ = run_chapter(chapter, tmp_path / "results", tmp_path / "nb.json", capsys)
    assert {v: statuses(document, v) for v in (OLD, NEW)} == NOTEBOOK_EXPECTED
    blocks = document["blocks"]
    assert [b["line"] for b in blocks[:3]] == [2, 3, 5]  # cell numbers
    assert blocks[1]["printed_differs"] == {OLD: False, NEW: False}  # the displayed value, as the notebook shows it
    assert blocks[3]["printed_differs"] == {OLD: True, NEW: False}
    assert blocks[7]["detail"][NEW].startswith("line 1: IndexError")
    assert blocks[10]["detail"][NEW] == "tagged skip-execution in the notebook"

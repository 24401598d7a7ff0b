"""A team's own pytest suite, made here, run on two real releases (e2e: builds environments from the index).

The folder holds a test using `jax.tree_map` (removed in 0.6.0), a test that fails once then passes (a file marks
its first run on each release), a module that imports `jax.tree_map` at its top (it stops collecting on 0.6.0) and a
slow test. Classified: regressed, flaky (never gating), collection error; and a `--budget` cuts the slow test."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from conformance.cli import main

pytestmark = pytest.mark.e2e

FILES = {
    "teamlib/__init__.py": """
        import jax

        def total(tree):
            return sum(jax.tree_util.tree_leaves(tree))

        def doubled(tree):
            return jax.tree_map(lambda x: 2 * x, tree)
    """,
    "tests/test_tree.py": """
        import teamlib

        def test_total():
            assert teamlib.total({"a": 1, "b": 2}) == 3

        def test_doubled_uses_tree_map():
            assert teamlib.doubled({"a": 1}) == {"a": 2}
    """,
    "tests/test_random.py": """
        import os
        import jax

        def test_sometimes():
            mark = os.path.join(os.environ["TEAM_MARKS"], f"ran-{jax.__version__}")
            first = not os.path.exists(mark)
            open(mark, "w").close()
            assert not first, "fails on its first run on each release"
    """,
    "tests/test_old_import.py": """
        from jax import tree_map

        def test_imported():
            assert tree_map(lambda x: x, 1) == 1
    """,
    "tests/test_slow.py": """
        import time

        def test_slow():
            time.sleep(4)
    """,
}


def _team_folder(root: Path) -> Path:
    folder = root / "teamsuite"
    for name, text in FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return folder


def test_a_team_folder_is_judged_test_by_test(tmp_path, monkeypatch, capsys):
    folder = _team_folder(tmp_path)
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("TEAM_MARKS", str(marks))
    results, out = tmp_path / "results", tmp_path / "out.json"
    code = main(
        ["downstream", str(folder), "--from", "0.5.3", "--to", "0.6.0", "--results", str(results), "--json", str(out)]
    )
    printed = capsys.readouterr().out
    assert code == 1, printed
    # The team's own package, scanned with `api scan` against the candidate: the removed name shows where it is used.
    assert "api scan of the folder's packages (teamlib) (1 file) against jax 0.6.0: 1 used name removed" in printed
    assert "jax.tree_map at teamlib/__init__.py:7" in printed, printed
    data = json.loads(out.read_text(encoding="utf-8"))
    statuses = data["suites"][str(folder)]
    assert statuses["0.5.3"]["tests/test_tree.py::test_doubled_uses_tree_map"] == "passed"
    assert statuses["0.6.0"]["tests/test_tree.py::test_doubled_uses_tree_map"] == "failed"
    assert statuses["0.6.0"]["tests/test_old_import.py"] == "collection_error"
    assert statuses["0.6.0"]["tests/test_random.py::test_sometimes"] == "flaky"
    changes = {c["node"]: c for c in data["judgements"][0]["changes"]}
    assert changes["tests/test_tree.py::test_doubled_uses_tree_map"]["kind"] == "regressed"
    assert "tree_map" in changes["tests/test_tree.py::test_doubled_uses_tree_map"]["signature"]
    assert changes["tests/test_old_import.py"]["kind"] == "regressed"
    assert changes["tests/test_old_import.py"]["after"] == "collection_error"
    assert changes["tests/test_random.py::test_sometimes"]["kind"] == "flaky"
    assert "tests/test_total" not in changes and "tests/test_tree.py::test_total" not in changes

    # The baseline is answered from storage; a budget planned from the recorded durations leaves the slow test out.
    code = main(
        [
            "downstream",
            str(folder),
            "--from",
            "0.5.3",
            "--to",
            "0.6.0",
            "--results",
            str(results),
            "--budget",
            "2",
            "--json",
            str(out),
        ]
    )
    printed = capsys.readouterr().out
    assert "left out 1" in printed and "tests/test_slow.py::test_slow" in printed, printed
    kept = json.loads(out.read_text(encoding="utf-8"))["suites"][str(folder)]["0.6.0"]
    assert "tests/test_slow.py::test_slow" not in kept
    assert kept["tests/test_tree.py::test_doubled_uses_tree_map"] == "failed"

"""`bisect NODEID --downstream FOLDER` on two real releases (e2e: builds the suite's environments from the index).

A team folder made here holds a test that calls `jax.tree_map` (removed in 0.6.0) and one that does not: the bisect
of the first from 0.5.3 to 0.6.0 names 0.6.0 as the first release where it changed, with its signature; run again,
both ends are answered from the cells it stored."""

from __future__ import annotations

import json
import textwrap

import pytest

from conformance.cli import main

pytestmark = pytest.mark.e2e

NODE = "tests/test_tree.py::test_doubled_uses_tree_map"


def test_one_test_of_a_team_folder_is_bisected_and_answered_from_storage_again(tmp_path, capsys):
    folder = tmp_path / "teamsuite"
    for name, text in {
        "teamlib/__init__.py": "import jax\n\ndef doubled(tree):\n    return jax.tree_map(lambda x: 2 * x, tree)\n",
        "tests/test_tree.py": """
            import teamlib

            def test_doubled_uses_tree_map():
                assert teamlib.doubled({"a": 1}) == {"a": 2}

            def test_other():
                pass
        """,
    }.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    results, verdict = tmp_path / "results", tmp_path / "verdict.json"
    argv = [
        "bisect",
        NODE,
        "--downstream",
        str(folder),
        "--good",
        "0.5.3",
        "--bad",
        "0.6.0",
        "--results",
        str(results),
        "--json",
        str(verdict),
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "first bad: jax 0.6.0" in out and "tree_map" in out
    written = json.loads(verdict.read_text(encoding="utf-8"))
    assert written["found"] and written["cell"] == NODE and written["first_bad"]["observation"]["test"] == "failed"
    assert main(argv) == 0
    assert "ran: nothing" in capsys.readouterr().out  # both ends answered from the stored cells

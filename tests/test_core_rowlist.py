"""`rowlist`: the chapter's behaviours table to `rows.tsv` and back, and the maintainer's script that imports it
(`tools/import_rows.py`, outside the package)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from conformance.core import rowlist
from conformance.core.rowlist import SUMMARY_CHARS, Row

TABLE = """\
| id | section | behaviour |
|----|---------|-----------|
| `a.b` | §1.2 | Does a thing. And more after it. |
| `c.d_2` |  §3 | Asks? Then answers. |
| `not a row` | x | y |
"""


def test_the_summary_is_the_first_sentence_cut_with_an_ellipsis():
    assert rowlist._one_line("  One. Two. Three.  ") == "One."  # noqa: SLF001
    assert rowlist._one_line("Wow! Then.") == "Wow!" and rowlist._one_line("No stop at all") == "No stop at all"  # noqa: SLF001
    exact = "x" * SUMMARY_CHARS
    assert rowlist._one_line(exact) == exact  # noqa: SLF001
    long = "y" * (SUMMARY_CHARS + 5)
    assert rowlist._one_line(long) == "y" * (SUMMARY_CHARS - 1) + "…"  # noqa: SLF001
    assert len(rowlist._one_line(long)) == SUMMARY_CHARS  # noqa: SLF001


def test_rows_of_the_table_are_read_in_order():
    assert rowlist.parse_behaviours(TABLE) == [Row("a.b", "§1.2", "Does a thing."), Row("c.d_2", "§3", "Asks?")]


def test_the_tsv_round_trips_and_a_tab_in_a_summary_becomes_a_space():
    rows = [Row("a.b", "§1", "one\ttwo"), Row("c.d", "§2", "three")]
    text = rowlist.render_tsv(rows)
    assert text.splitlines()[0].startswith("# id\tsection\tsummary")
    assert text.splitlines()[1:] == ["a.b\t§1\tone two", "c.d\t§2\tthree"] and text.endswith("\n")
    assert rowlist.parse_tsv(text) == [Row("a.b", "§1", "one two"), Row("c.d", "§2", "three")]
    assert rowlist.parse_tsv("x.y\n\n# comment\nz.w\t§9\n") == [Row("x.y", "", ""), Row("z.w", "§9", "")]


def test_the_projects_row_ids_are_the_files():
    assert rowlist.row_ids() == frozenset(r.id for r in rowlist.parse_tsv(rowlist.ROWS_FILE.read_text("utf-8")))
    assert rowlist.load_rows() is rowlist.load_rows()


def import_rows_script():
    """`tools/import_rows.py`, the maintainer's script outside the package, imported from its path."""
    path = Path(__file__).resolve().parents[1] / "tools" / "import_rows.py"
    spec = importlib.util.spec_from_file_location("import_rows", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_script_writes_checks_and_refuses_an_unreadable_file(tmp_path, monkeypatch, capsys):
    behaviours = tmp_path / "behaviours.md"
    behaviours.write_text(TABLE, encoding="utf-8")
    monkeypatch.setattr(rowlist, "ROWS_FILE", tmp_path / "rows.tsv")
    script = import_rows_script()
    assert script.main([str(behaviours), "--check"]) == 1
    assert capsys.readouterr().out == f"rows.tsv differs from {behaviours}; regenerate it\n"
    assert script.main([str(behaviours)]) == 0
    assert capsys.readouterr().out == f"wrote {tmp_path / 'rows.tsv'} (2 rows)\n"
    assert (tmp_path / "rows.tsv").read_text(encoding="utf-8") == rowlist.render_tsv(rowlist.parse_behaviours(TABLE))
    assert script.main([str(behaviours), "--check"]) == 0
    assert capsys.readouterr().out == "rows.tsv is up to date\n"
    assert script.main([str(tmp_path)]) == 2  # a folder: one line, nothing written
    err = capsys.readouterr().err
    assert err == f"import_rows: cannot read {tmp_path}: {tmp_path} is a folder, not a regular file\n"
    with pytest.raises(SystemExit):
        script.main([])


def test_the_script_names_why_a_file_cannot_be_read_and_explains_itself(tmp_path, capsys):
    script = import_rows_script()
    assert script.main([str(tmp_path / "missing.md")]) == 2
    assert capsys.readouterr().err == f"import_rows: cannot read {tmp_path / 'missing.md'}: No such file or directory\n"
    with pytest.raises(SystemExit) as done:
        script.main(["--help"])
    assert done.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert shown.startswith("usage: python tools/import_rows.py [-h] [--check] behaviours")
    assert "behaviours the chapter's behaviours.md" in shown and "--check exit 1 if rows.tsv differs from it" in shown


def test_refresh_rows_leaves_rows_tsv_alone_when_checking(tmp_path, monkeypatch):
    monkeypatch.setattr(rowlist, "ROWS_FILE", tmp_path / "rows.tsv")
    assert rowlist.refresh_rows(TABLE, "b.md", check=True) == ("rows.tsv differs from b.md; regenerate it", 1)
    assert not (tmp_path / "rows.tsv").exists()
    assert rowlist.refresh_rows(TABLE, "b.md")[1] == 0 and rowlist.refresh_rows(TABLE, "b.md", check=True)[1] == 0


def test_the_committed_row_list_is_its_own_source_and_regenerates_byte_for_byte():
    """rows.tsv is the source of truth inside the repository: read from the committed text (git's, when this is a
    clone), parsed and rendered again, it is the same bytes, and it holds each ID once."""
    import subprocess

    path = rowlist.ROWS_FILE
    try:
        shown = subprocess.run(
            ["git", "show", "HEAD:conformance/core/rows.tsv"],
            cwd=path.parent,
            capture_output=True,
            check=True,
            timeout=30,
        ).stdout.decode("utf-8")
    except (OSError, subprocess.SubprocessError):  # not a clone (an installed wheel): the file itself
        shown = path.read_text(encoding="utf-8")
    for text in (shown, path.read_text(encoding="utf-8")):
        assert rowlist.render_tsv(rowlist.parse_tsv(text)) == text
    ids = [r.id for r in rowlist.parse_tsv(shown)]
    assert len(ids) == len(set(ids)) > 100


@pytest.mark.parametrize(
    "drift",
    [
        "# old header\na.b\t§1\tx\n",
        f"{rowlist.HEADER}\na.b\t§1\n",
        f"{rowlist.HEADER}\na.b\t§1\tx\ty\n",
        f"{rowlist.HEADER}\na.b\t§1\tx",
    ],
)
def test_a_hand_edit_off_the_canonical_form_does_not_regenerate_to_itself(drift):
    """The byte-for-byte check above can fail: a changed header, a missing field, a stray tab, no final newline."""
    assert rowlist.render_tsv(rowlist.parse_tsv(drift)) != drift

"""One output check covers every file a command reads, named or found, and every folder it will make (issue 43: S07
and A01's remainder): it runs before any work, so a refused output costs one line and nothing else."""

from __future__ import annotations

import pytest

from conformance import cli

CHAPTER = "1.1 Printing\n\nA paragraph of prose.\n\nx = 2\nprint(x * 2)\n4\n"


class _NoBuild:
    """A builder that fails the test if the command gets as far as building anything."""

    def __getattr__(self, name):
        raise AssertionError(f"the command did work ({name}) before its outputs were checked")


def _refused(argv: list[str], capsys, monkeypatch) -> str:
    monkeypatch.setattr(cli, "make_builder", lambda args: _NoBuild())
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize("kind", ["skip", "map"])
@pytest.mark.parametrize("option", ["--json", "-o"])
def test_an_output_naming_the_skip_list_or_map_file_found_beside_the_chapter_is_refused(
    tmp_path, capsys, monkeypatch, kind, option
):
    """S07: `--json`/`-o` naming the skip list or map file the command found by itself overwrote it."""
    chapter = tmp_path / "small.txt"
    chapter.write_text(CHAPTER, encoding="utf-8")
    found = tmp_path / f"small.{kind}.toml"
    text = '[[skip]]\nheading = "1.1"\nindex = 1\nreason = "r"\n' if kind == "skip" else "[[block]]\nlines = [5, 6]\n"
    found.write_text(text, encoding="utf-8")
    err = _refused(
        ["chapter", str(chapter), "--jax", "0.4.30", option, str(found), "--results", str(tmp_path / "results")],
        capsys,
        monkeypatch,
    )
    assert "which this command reads" in err
    assert found.read_text(encoding="utf-8") == text


def test_a_page_lists_skip_list_is_protected_too(tmp_path, capsys, monkeypatch):
    skip = tmp_path / "p.skip.toml"
    skip.write_text('[[skip]]\nheading = "1.1"\nindex = 1\nreason = "r"\n', encoding="utf-8")
    pages = tmp_path / "pages.toml"
    pages.write_text(
        'repository = "jax-ml/jax"\n\n[[page]]\npath = "docs/p.md"\ncommit = "'
        + "a" * 40
        + '"\nblob = "'
        + "b" * 40
        + '"\nname = "p"\nskip = "p.skip.toml"\n',
        encoding="utf-8",
    )
    err = _refused(
        ["chapter", "--pages", str(pages), "--docs", str(tmp_path), "--jax", "0.4.30", "-o", str(skip)],
        capsys,
        monkeypatch,
    )
    assert "which this command reads" in err


@pytest.mark.parametrize("option", ["--json", "--issue"])
def test_bisect_output_naming_the_results_folder_it_will_make_is_refused_before_the_search(
    tmp_path, capsys, monkeypatch, option
):
    """A01's remainder: `bisect --json r2 --results r2` where r2 did not exist passed the check and failed only after
    the whole search (the verdict lost)."""
    r2 = tmp_path / "r2"
    err = _refused(
        [
            "bisect",
            "numerics.debug_nans_vmap_miss:vmap",
            "--good",
            "0.4.30",
            "--bad",
            "0.6.0",
            option,
            str(r2),
            "--results",
            str(r2),
        ],
        capsys,
        monkeypatch,
    )
    assert "is the results folder" in err and not r2.exists()


def test_chapter_json_naming_the_results_folder_it_will_make_is_refused(tmp_path, capsys, monkeypatch):
    chapter = tmp_path / "small.txt"
    chapter.write_text(CHAPTER, encoding="utf-8")
    r2 = tmp_path / "r2"
    err = _refused(
        ["chapter", str(chapter), "--jax", "0.4.30", "--json", str(r2), "--results", str(r2)], capsys, monkeypatch
    )
    assert "is the results folder" in err

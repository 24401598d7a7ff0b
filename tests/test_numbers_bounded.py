"""Numbers given on the command line or in a map file are bounded, with a one-line error (issue 43: S06, S12)."""

from __future__ import annotations

import pytest

from conformance import cli
from conformance.chapter.mapfile import parse_map
from conformance.errors import ConformanceError
from tests.test_output_check import CHAPTER, _refused


@pytest.mark.parametrize("value", ["1e10", "86401", "0", "-1", "nan", "inf"])
def test_a_chapter_timeout_outside_a_sane_range_is_one_line(tmp_path, capsys, monkeypatch, value):
    """S06: `--timeout 1e10` was accepted, and every block was then stored as `raised OverflowError`, exit 0."""
    chapter = tmp_path / "small.txt"
    chapter.write_text(CHAPTER, encoding="utf-8")
    err = _refused(
        ["chapter", str(chapter), "--jax", "0.4.30", "--timeout", value, "--results", str(tmp_path / "r")],
        capsys,
        monkeypatch,
    )
    assert "--timeout takes a number of seconds above 0 and at most 86400" in err
    assert not (tmp_path / "r").exists()


def test_a_timeout_of_a_day_is_taken(tmp_path, capsys):
    chapter = tmp_path / "small.txt"
    chapter.write_text(CHAPTER, encoding="utf-8")
    assert cli.main(["chapter", str(chapter), "--blocks", "--timeout", "86400"]) == 0


@pytest.mark.parametrize("argv", [["-j", "100000"], ["-j", "0"], ["--retries", "1000000"], ["--retries", "-1"]])
def test_run_workers_and_retries_are_bounded(tmp_path, capsys, monkeypatch, argv):
    err = _refused(["run", "--jax", "0.4.30", *argv, "--results", str(tmp_path / "r")], capsys, monkeypatch)
    assert ("-j" in err or "--retries" in err) and ("at most" in err or "at least" in err or "negative" in err)


@pytest.mark.parametrize(
    "text",
    [
        "[[block]]\nlines = [5, 9]\n[[block]]\nlines = [8, 12]\n",
        "[[block]]\nlines = [5, 9]\noutput = [10, 11]\n[[block]]\nlines = [11, 12]\n",
        "[[block]]\nlines = [1, 20]\noutput = [3, 4]\n[[block]]\nlines = [15, 16]\n",
    ],
)
def test_overlapping_map_blocks_are_refused(text):
    """S12: overlapping `[[block]]` ranges in a map file were accepted."""
    with pytest.raises(ConformanceError, match=r"overlap; each line belongs to one block at most"):
        parse_map(text, "m.map.toml")


def test_blocks_side_by_side_are_taken():
    parsed = parse_map("[[block]]\nlines = [5, 9]\noutput = [10, 10]\n[[block]]\nlines = [11, 12]\n")
    assert [(b.first, b.last) for b in parsed.blocks] == [(5, 9), (11, 12)]

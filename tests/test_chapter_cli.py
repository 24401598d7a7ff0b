"""`jax-conformance chapter` on the command line (issue 37): `--blocks` lists the split, bad input is one line and
exit 2 (never a traceback), and nothing is built before the input is checked. No JAX."""

from __future__ import annotations

import os

import pytest

from conformance import cli

SEED = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "shared",
    "seeds",
    "000_074f18c932eb1ee6.txt",
)

CHAPTER = """\
1.1 Printing

A paragraph of prose, with a sentence.

x = 2
print(x * 2)
4

Prose again.

import jax
jax.debug.breakpoint()
"""


def test_blocks_lists_each_block_with_its_lines_heading_first_line_and_skip_reason(tmp_path, capsys):
    chapter = tmp_path / "small.txt"
    chapter.write_text(CHAPTER, encoding="utf-8")
    (tmp_path / "small.skip.toml").write_text(
        '[[skip]]\nheading = "1.1"\nindex = 2\nreason = "needs a terminal"\n', encoding="utf-8"
    )
    assert cli.main(["chapter", str(chapter), "--blocks", "--results", str(tmp_path / "results")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"small (text, {chapter}): 2 blocks"
    assert "lines 5-6, output 7-7  [1.1 Printing]" in out[1] and out[2].strip() == "x = 2"
    assert "lines 11-12  [1.1 Printing]" in out[3] and out[5].strip() == "(skipped: needs a terminal)"
    assert not (tmp_path / "results").exists()  # listing stores nothing


@pytest.mark.skipif(not os.path.isfile(SEED), reason="../shared/seeds is absent: the seed chapter is not listed")
def test_the_seed_chapter_lists_91_blocks_and_its_skip_list_matches(capsys):
    assert cli.main(["chapter", SEED, "--blocks"]) == 0
    printed = capsys.readouterr()
    assert printed.out.splitlines()[0].endswith(": 91 blocks") and "names no block" not in printed.out
    assert printed.out.count("(skipped: needs an interactive terminal") == 1


def _error(argv, capsys) -> str:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    return err


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    chapter = tmp_path / "small.txt"
    chapter.write_text(CHAPTER, encoding="utf-8")
    assert "does not exist" in _error(["chapter", str(tmp_path / "missing.txt"), "--blocks"], capsys)
    assert "not a regular file" in _error(["chapter", str(tmp_path), "--blocks"], capsys)
    (tmp_path / "bad.skip.toml").write_text("[[skip]\n", encoding="utf-8")
    assert "not valid TOML" in _error(
        ["chapter", str(chapter), "--blocks", "--skip", str(tmp_path / "bad.skip.toml")], capsys
    )
    (tmp_path / "small.map.toml").write_text("[[block]]\nlines = [9, 1]\n", encoding="utf-8")
    assert "first not after the last" in _error(["chapter", str(chapter), "--blocks"], capsys)
    (tmp_path / "small.map.toml").unlink()
    assert "--timeout takes" in _error(["chapter", str(chapter), "--jax", "0.12.0.1", "--timeout", "0"], capsys)
    (tmp_path / "nb.ipynb").write_text("{not a notebook", encoding="utf-8")
    assert "not a Jupyter notebook" in _error(["chapter", str(tmp_path / "nb.ipynb"), "--blocks"], capsys)
    (tmp_path / "latin.txt").write_bytes("x = 'caf\xe9'\n".encode("latin-1"))
    assert "not UTF-8" in _error(["chapter", str(tmp_path / "latin.txt"), "--blocks"], capsys)
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.txt")
        assert "FIFO" in _error(["chapter", str(tmp_path / "fifo.txt"), "--blocks"], capsys)


def test_the_json_output_may_not_be_a_result_file(tmp_path, capsys):
    chapter = tmp_path / "small.txt"
    chapter.write_text(CHAPTER, encoding="utf-8")
    results = tmp_path / "results"
    results.mkdir()
    (results / "0.12.0.1-linux-x86_64.json").write_text("{}", encoding="utf-8")
    assert "is a result file" in _error(
        [
            "chapter",
            str(chapter),
            "--jax",
            "0.12.0.1",
            "--results",
            str(results),
            "--json",
            str(results / "0.12.0.1-linux-x86_64.json"),
        ],
        capsys,
    )


def test_pages_lists_each_page_of_a_list_from_a_checkout_and_bad_input_is_one_line(tmp_path, capsys):
    from conformance.chapter.pages import git_blob_id

    page = b"---\nkernelspec:\n  name: python3\n---\n# P\n\n```{code-cell}\nx = 1\n```\n\n```python\nx = 2\n```\n"
    (tmp_path / "jax" / "docs").mkdir(parents=True)
    (tmp_path / "jax" / "docs" / "p.md").write_bytes(page)
    listed = tmp_path / "pages.toml"
    listed.write_text(
        f'repository = "jax-ml/jax"\n[[page]]\npath = "docs/p.md"\ncommit = "{"a" * 40}"\n'
        f'blob = "{git_blob_id(page)}"\n',
        encoding="utf-8",
    )
    assert cli.main(["chapter", "--pages", str(listed), "--docs", str(tmp_path / "jax"), "--blocks"]) == 0
    out = capsys.readouterr().out
    assert "page docs/p.md (jax-ml/jax@aaaaaaaaaaaa): docs/p" in out and "docs/p (markdown, docs/p.md): 2 blocks" in out
    assert "(not run: a listing: the page is a MyST notebook, whose build runs only its {code-cell}s)" in out
    for args, said in (
        (["--pages", str(listed)], "--pages LIST and --docs CHECKOUT go together"),
        ([str(listed), "--pages", str(listed), "--docs", str(tmp_path)], "go together"),
        ([], "name the chapter to run"),
        (["--pages", str(listed), "--docs", str(tmp_path)], "docs/p.md is not in"),
    ):
        assert cli.main(["chapter", *args, "--blocks"]) == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_without_sigalrm_chapter_says_in_one_line_that_it_needs_it_and_blocks_still_lists(
    tmp_path, capsys, monkeypatch
):
    """Windows has no SIGALRM/setitimer, each block's time limit (issue 60): one line, exit 2, before any build."""
    import signal

    chapter = tmp_path / "small.txt"
    chapter.write_text(CHAPTER, encoding="utf-8")
    monkeypatch.delattr(signal, "setitimer")
    line = _error(["chapter", str(chapter), "--jax", "0.12.0.1", "--results", str(tmp_path / "results")], capsys)
    assert "needs POSIX signals (SIGALRM" in line and "WSL" in line
    assert not (tmp_path / "results").exists()
    assert cli.main(["chapter", str(chapter), "--blocks"]) == 0


def test_bisect_of_takes_all_three_or_none_and_needs_the_chapter():
    """`--bisect BLOCK --good G --bad V` is one triple or nothing; one of them alone, or no chapter, is one line."""
    from pathlib import Path

    from conformance.chapter.command import bisect_of
    from conformance.errors import ConformanceError

    assert bisect_of(Path("page.md"), None, None, None) is None
    assert bisect_of(Path("page.md"), "b1", "0.8.3", "0.12.0.1") == ("b1", "0.8.3", "0.12.0.1")
    for given in (("b1", None, None), (None, "0.8.3", None), ("b1", "0.8.3", None), (None, None, "0.12.0.1")):
        with pytest.raises(ConformanceError, match="needs --good VERSION and --bad VERSION"):
            bisect_of(Path("page.md"), *given)
    with pytest.raises(ConformanceError, match="name the chapter to run"):
        bisect_of(None, "b1", "0.8.3", "0.12.0.1")

"""Untrusted text is never raw on a terminal or in a CI log (issue 43: S02, S03, S11): one function
(`conformance.safetext`) every printer uses; `api scan` in every format and `chapter --blocks` fed names, file names,
headings and skip reasons holding newlines, `::`, ESC, OSC and NUL print no workflow command and no control
character."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conformance import cli
from conformance.api.findings import FORMATS
from conformance.api.scan import uses_in_files
from conformance.safetext import terminal_lines, terminal_text, workflow_data, workflow_property
from tests.test_api_scan import synthetic_pair

HOSTILE = "a\n::error file=x::forged\x1b]0;title\x07\x00\x9b2J\r##[warning]x\u202e"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _no_command_and_no_control(text: str, allowed_commands: tuple[str, ...] = ()) -> None:
    """No line a CI runner takes as a workflow command (bar the ones the format prints on purpose), no control."""
    assert not CONTROL.search(text), repr(text)
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("::"):
            assert stripped.split(" ")[0] in allowed_commands, repr(line)
        assert not stripped.startswith("##["), repr(line)


def test_terminal_text_is_one_line_with_every_control_visible_and_no_command():
    shown = terminal_text(HOSTILE)
    assert "\n" not in shown and not CONTROL.search(shown)
    assert shown.startswith("a\\n::error") and "\\x1b]0;title\\x07\\x00\\x9b2J\\r##[warning]" in shown
    assert "\\u202e" in shown
    assert terminal_text("::error::x") == "\\x3a:error::x"
    assert terminal_text("  ##[error]x") == "  \\x23#[error]x"
    assert terminal_text("plain: text, 100%") == "plain: text, 100%"
    assert terminal_lines("one\n::two\x1b") == "one\n\\x3a:two\\x1b"


def test_workflow_values_use_githubs_escapes_and_show_other_controls():
    assert workflow_data("100%\r\nx\x1by") == "100%25%0D%0Ax\\x1by"
    assert workflow_property("a:b,c\n") == "a%3Ab%2Cc%0A"


def _census_files(tmp_path: Path) -> dict[str, Path]:
    files = {}
    for side in synthetic_pair():
        files[side.jax] = tmp_path / f"census-{side.jax}.json"
        files[side.jax].write_text(json.dumps({**side.header, "names": side.names, "modules": side.modules}))
    return files


@pytest.mark.parametrize("fmt", FORMATS)
def test_api_scan_prints_no_workflow_command_and_no_control_in_any_format(tmp_path, capsys, fmt):
    """S02: a newline in a `jax.config.update` string or a file name put `::error` lines into a CI log; ESC raw."""
    repo = tmp_path / "repo"
    folder = repo / "sub\n::error file=f::x\x1b[31m"
    folder.mkdir(parents=True)
    source = (
        'import jax\njax.config.update("jax_x\\n::error::forged\\x1b]0;t\\x07\\x00\\r##[error]y", 1)\n'
        "jax.tree_map(f, t)\n"
    )
    (folder / "a\n::warning::b\x1b.py").write_text(source, encoding="utf-8")
    results = tmp_path / "results"
    code = cli.main(
        [
            "api",
            "scan",
            str(repo),
            "--to",
            str(_census_files(tmp_path)["0.6.2"]),
            "--format",
            fmt,
            "--results",
            str(results),
        ]
    )
    captured = capsys.readouterr()
    assert code == 1
    allowed = ("::error", "::warning", "::notice") if fmt == "github" else ()
    _no_command_and_no_control(captured.out, allowed)
    _no_command_and_no_control(captured.err)
    if fmt == "github":  # each finding is one command, its values escaped: nothing forged starts a line
        lines = captured.out.strip().split("\n")
        assert len(lines) == 2 and all(line.startswith("::error file=") for line in lines)
        assert all(":" not in line[2:].split("::", 1)[0] for line in lines)  # properties escaped: %3A, %0A
        assert all("%0A" in line for line in lines)
    if fmt in ("json", "sarif"):
        json.loads(captured.out)  # still the JSON it was


def test_a_non_text_codec_or_undecodable_bytes_is_one_note_and_the_scan_goes_on(tmp_path, capsys):
    """S03: `# -*- coding: rot13 -*-` ended the whole scan in a LookupError traceback, exit 1."""
    uses, skipped = uses_in_files(
        [
            ("rot.py", b"# -*- coding: rot13 -*-\nvzcbeg wnk\n"),
            ("bad.py", b"# -*- coding: utf-8 -*-\nx = '\xff\xfe'\n"),
            ("nocodec.py", b"# -*- coding: no-such-codec -*-\nx = 1\n"),
            ("fine.py", b"import jax\njax.tree_map(f, t)\n"),
        ]
    )
    assert [u.name for u in uses] == ["jax.tree_map"]
    assert [line.split(":")[0] for line in skipped] == ["rot.py", "bad.py", "nocodec.py"]
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "rot.py").write_bytes(b"# -*- coding: rot13 -*-\nvzcbeg wnk\n")
    code = cli.main(
        [
            "api",
            "scan",
            str(repo),
            "--to",
            str(_census_files(tmp_path)["0.6.2"]),
            "--results",
            str(tmp_path / "results"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    notes = [line for line in captured.err.splitlines() if "rot.py" in line]
    assert len(notes) == 1 and "not parsed" in notes[0] and "Traceback" not in captured.err


def test_chapter_blocks_prints_headings_code_skip_reasons_and_map_titles_escaped(tmp_path, capsys):
    """S11: `--blocks` printed headings, code, skip reasons and map titles raw (ESC, OSC, NUL reached the
    terminal)."""
    chapter = tmp_path / "c.md"
    chapter.write_text(
        "# T\x1b]0;x\x07\n\n## 1.1 H\x1b[2J\x00 ::error::x\n\n```python\nx = '\x1b[31m'  # \x9b\n```\n"
        "\n```python\nprint(1)\n```\n",
        encoding="utf-8",
    )
    cli.main(["chapter", str(chapter), "--blocks"])
    hashes = [line.split()[2] for line in capsys.readouterr().out.splitlines()[1:] if line[:4].strip().isdigit()]
    (tmp_path / "c.skip.toml").write_text(
        f'[[skip]]\nhash = "{hashes[0]}"\nreason = "why\\u001b[2J\\n::error::x"\n', encoding="utf-8"
    )
    assert cli.main(["chapter", str(chapter), "--blocks"]) == 0
    captured = capsys.readouterr()
    _no_command_and_no_control(captured.out)
    _no_command_and_no_control(captured.err)
    assert "\\x1b[2J" in captured.out and "skipped: why\\x1b[2J\\n::error::x" in captured.out
    text = tmp_path / "t.txt"  # a plain-text chapter, its split corrected by a map file with a title of its own
    text.write_text("Some prose.\n\nx = 1\n", encoding="utf-8")
    (tmp_path / "t.map.toml").write_text(
        '[[block]]\nlines = [3, 3]\nsection = "1.2"\ntitle = "M\\u001b[5m\\u0000"\n', encoding="utf-8"
    )
    assert cli.main(["chapter", str(text), "--blocks"]) == 0
    captured = capsys.readouterr()
    _no_command_and_no_control(captured.out)
    assert "M\\x1b[5m\\x00" in captured.out

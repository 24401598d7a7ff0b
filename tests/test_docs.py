"""The documentation cannot drift from the project: every relative link and anchor of README.md and docs/ resolves,
every `jax-conformance …` command line they show parses with the real parser, and every option a synopsis names
exists on its subcommand (issue 27).

Command lines are taken from `sh`/`console`/`bash`/`shell` blocks (a console line starts with `$ `), from `run:`
steps of `yaml` blocks, and from inline code spans; `python3 -m conformance …` is the same command. Synopses, the
`[--option ...]` forms of `text` blocks, are not command lines: there each `--option` must exist.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from conformance.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXPECTED_PAGES = {
    "running.md",
    "report.md",
    "decisions.md",
    "builds.md",
    "team-cases.md",
    "ci.md",
    "writing-cases.md",
    "statuses.md",
    "result-format.md",
    "layout.md",
    "sensitivity.md",
    "benchmarks.md",
    "api.md",
    "python-api.md",
}
COMMAND = re.compile(r"(?:^|\s)(?:jax-conformance|python3? -m conformance)\s")
SHELL_FENCES = {"sh", "console", "bash", "shell"}


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def blocks(text: str) -> list[tuple[str, list[str]]]:
    """The page's fenced blocks (their language and lines) and, as language "", its prose lines."""
    found, prose, fence, lines = [], [], None, []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            if fence is None:
                fence, lines = stripped[3:].strip(), []
            else:
                found.append((fence, lines))
                fence = None
        elif fence is None:
            prose.append(line)
        else:
            lines.append(line)
    return found + [("", prose)]


def anchors(path: Path) -> set[str]:
    """The anchors of a page: one per heading outside code blocks (repeats numbered as GitHub does)."""
    seen: dict[str, int] = {}
    result = set()
    for line in dict(blocks(path.read_text(encoding="utf-8")))[""]:
        match = re.match(r"^#{1,6} (.+)$", line)
        if match:
            base = slug(match.group(1))
            result.add(base if base not in seen else f"{base}-{seen[base]}")
            seen[base] = seen.get(base, 0) + 1
    return result


def links(path: Path) -> list[str]:
    """The relative link targets of a page's prose (not in code)."""
    prose = "\n".join(dict(blocks(path.read_text(encoding="utf-8")))[""])
    prose = re.sub(r"`[^`]*`", "", prose)
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", prose) if not re.match(r"^[a-z]+:", t)]


def command_lines(path: Path) -> list[str]:
    """Every command line of the page (see the module docstring), as written."""
    found = []
    for language, lines in blocks(path.read_text(encoding="utf-8")):
        if language in SHELL_FENCES:
            joined = "\n".join(lines).replace("\\\n", " ").splitlines()
            found += [
                line.strip()[2:] if language == "console" else line
                for line in joined
                if (language != "console" or line.strip().startswith("$ "))
            ]
        elif language == "yaml":
            found += yaml_run_steps(lines)
        elif language == "":
            found += re.findall(r"`([^`]+)`", "\n".join(lines))
    return [line for line in found if COMMAND.search(" " + line)]


def yaml_run_steps(lines: list[str]) -> list[str]:
    """The `run:` steps of a YAML block, each with its continuation lines (those indented past the `run:` key, as a
    YAML plain scalar folds them)."""
    steps: list[str] = []
    key_column = None
    for line in lines:
        match = re.match(r"^(\s*(?:- )?)run:\s*(.*)$", line)
        if match:
            key_column = len(match.group(1))
            steps.append(match.group(2))
        elif key_column is not None and line.strip() and len(line) - len(line.lstrip()) > key_column:
            steps[-1] += " " + line.strip()
        else:
            key_column = None
    return steps


def argv_of(line: str) -> list[str]:
    """The arguments after the command name, up to a comment, pipe, redirection or `&&`."""
    words = shlex.split(line, comments=True)
    start = next(
        i for i, w in enumerate(words) if w == "jax-conformance" or (w == "conformance" and i and words[i - 1] == "-m")
    )
    argv = []
    for word in words[start + 1 :]:
        if word in ("|", "&&", ";", ">", ">>") or word.startswith((">", "|")):
            break
        argv.append(word)
    return argv


def test_the_documentation_pages_are_the_listed_ones_and_the_readme_is_short():
    assert {p.name for p in (ROOT / "docs").glob("*.md")} >= EXPECTED_PAGES
    assert len((ROOT / "README.md").read_text(encoding="utf-8").split()) <= 1500


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_every_relative_link_and_anchor_resolves(path):
    broken = []
    for target in links(path):
        where, _, anchor = target.partition("#")
        page = (path.parent / where).resolve() if where else path
        if not page.exists():
            broken.append(target)
        elif anchor and page.suffix == ".md" and anchor not in anchors(page):
            broken.append(target)
    assert broken == []


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_every_command_line_shown_parses_with_the_real_parser(path, capsys):
    parser, refused = build_parser(), []
    for line in command_lines(path):
        try:
            parser.parse_args(argv_of(line))
        except SystemExit as exc:  # `--help` and `--version` exit 0
            if exc.code:
                refused.append(line)
    capsys.readouterr()
    assert refused == []


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_every_option_a_synopsis_names_exists(path):
    parser = build_parser()
    commands = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices
    unknown = []
    for language, lines in blocks(path.read_text(encoding="utf-8")):
        if language != "text":
            continue
        for line in lines:
            match = re.match(r"^\s*jax-conformance (\w+)(.*)$", line.split("#")[0])
            if not match:
                continue
            command, rest = commands[match.group(1)], match.group(2)
            actions = next((a.choices for a in command._actions if a.__class__.__name__ == "_SubParsersAction"), {})
            word = (rest.split() or [""])[0]
            if word in actions:  # a command's action (`api diff`): its own options
                command, rest = actions[word], rest.split(None, 1)[1] if len(rest.split()) > 1 else ""
            known = {o for a in command._actions for o in a.option_strings}
            unknown += [o for o in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", rest) if o not in known]
    assert unknown == []


def test_the_checks_can_fail(tmp_path):
    """A broken link, an unknown anchor and a command the parser refuses are each found."""
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n[x](missing.md) [y](#nowhere) [z](#title)\n\n```sh\njax-conformance run --no-such\n```\n",
        encoding="utf-8",
    )
    assert links(page) == ["missing.md", "#nowhere", "#title"] and anchors(page) == {"title"}
    (line,) = command_lines(page)
    with pytest.raises(SystemExit):
        build_parser().parse_args(argv_of(line))
    steps = yaml_run_steps(
        ["- run: jax-conformance gate --from 0.12.0.1", "    --to 0.13.0", "- if: always()", "  run: cat gate.md"]
    )
    assert steps == ["jax-conformance gate --from 0.12.0.1 --to 0.13.0", "cat gate.md"]


def test_ci_runs_the_readmes_test_line():
    """`.ci/run` runs exactly the quick start's second line: the lint and format check (ruff) and the project's own
    tests."""
    sh = next(lines for language, lines in blocks((ROOT / "README.md").read_text(encoding="utf-8")) if language == "sh")
    test_line = sh[1].strip()
    assert test_line == (
        "python3 -m pip install -e '.[test]' && python3 -m ruff check . && python3 -m ruff format --check . "
        "&& python3 -m pytest"
    )
    assert (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip().endswith(test_line)

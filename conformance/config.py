"""A team's defaults for the command line: a `[tool.jax-conformance]` table in `pyproject.toml`, or the same keys at
the top of a `jax-conformance.toml`, found from the current folder upward (the first folder holding either; there
`jax-conformance.toml` wins). Flags on the command line win over it; a list key (`cases`, `extra-index-url`,
`find-links`) is as if written first on the command line, so flags add to it, as pytest's `addopts` do. Relative
paths are read from the file's folder. A bad key or value is a one-line error naming the file and the key.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from conformance.errors import ConformanceError
from conformance.readfile import read_regular_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

TABLE = "jax-conformance"
# key: (the options' argparse dest, the kind of value): what a team repeats on every CI step
KEYS: dict[str, tuple[str, str]] = {
    "cases": ("cases", "folders"),
    "expectations": ("expectations", "path"),
    "results": ("results", "path"),
    "index-url": ("index_url", "text"),
    "extra-index-url": ("extra_index_url", "texts"),
    "find-links": ("find_links", "texts"),
    "matrix": ("matrix", "text"),
    "pre": ("pre", "flag"),
}


@dataclass(frozen=True)
class Config:
    """The defaults a configuration file sets (argparse dest → value) and the file they came from."""

    source: Path | None = None
    values: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        """One line naming the file and the keys it set (what `-v` prints)."""
        if self.source is None:
            return (
                "jax-conformance: no configuration file (pyproject.toml [tool.jax-conformance], jax-conformance.toml)"
            )
        keys = ", ".join(k for k, (dest, _) in KEYS.items() if dest in self.values) or "no keys"
        return f"jax-conformance: defaults from {self.source}: {keys}"


def find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest configuration file from `start` upward and its table; None when there is none."""
    for folder in [start, *start.parents]:
        own = folder / "jax-conformance.toml"
        if own.is_file():
            return own, _toml(own)
        project = folder / "pyproject.toml"
        if project.is_file():
            table = _toml(project).get("tool", {}).get(TABLE)
            if table is not None:
                if not isinstance(table, dict):
                    raise ConformanceError(f"{project}: [tool.{TABLE}] should be a table of keys")
                return project, table
    return None


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(read_regular_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise ConformanceError(f"{path} is not valid TOML: {exc}") from None


def parse_config(table: dict[str, Any], source: Path) -> Config:
    """Check each key and value of `table` (read from `source`) and convert them to argparse defaults."""
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in KEYS:
            raise ConformanceError(
                f"{source}: unknown key {key!r} in the jax-conformance configuration; the keys are {', '.join(KEYS)}"
            )
        dest, kind = KEYS[key]
        values[dest] = _value(value, kind, f"{source}: `{key}`", source.parent)
    return Config(source, values)


def _value(value: Any, kind: str, where: str, base: Path) -> Any:
    if kind == "flag":
        if not isinstance(value, bool):
            raise ConformanceError(f"{where} should be true or false, not {value!r}")
        return value
    listed = kind in ("folders", "texts")
    items = value if listed else [value]
    if not isinstance(items, list) or not items or not all(isinstance(item, str) and item.strip() for item in items):
        wanted = "a list of non-empty strings" if listed else "a non-empty string"
        raise ConformanceError(f"{where} should be {wanted}, not {value!r}")
    if kind == "folders":
        return [str(base / item) for item in items]
    if kind == "path":
        return base / items[0]
    return items if listed else items[0]


def load_config(start: Path | None = None) -> Config:
    """The configuration that applies in `start` (the current folder by default)."""
    found = find_config((start or Path.cwd()).absolute())
    return Config() if found is None else parse_config(found[1], found[0])


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                yield from _parsers(child)


def apply_config(parser: argparse.ArgumentParser, config: Config) -> None:
    """Make `config`'s values the defaults of every (sub)command's option that has their dest."""
    for each in _parsers(parser):
        for action in each._actions:
            if action.dest not in config.values or not action.option_strings:
                continue
            value = config.values[action.dest]
            if isinstance(action, argparse._AppendAction):
                value = list(value) if isinstance(value, list) else [value]
            action.default = value


# -v / -q: what they change is the progress lines (`report.progress.event_lines`); set as the command line is parsed
VERBOSITY = [0]


class _Verbosity(argparse.Action):
    def __init__(
        self, option_strings: list[str], dest: str, step: int = 1, config: Config | None = None, **kwargs: Any
    ) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)
        self.step, self.config = step, config

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        VERBOSITY[0] = self.step
        if self.step > 0 and self.config is not None:
            print(self.config.describe(), file=sys.stderr)


def add_verbosity(parser: argparse.ArgumentParser, config: Config) -> None:
    """`-v`/`--verbose` (also say which configuration file set which defaults) and `-q`/`--quiet` (no progress
    lines: warnings, errors and the outcome still print) on `parser` and every subcommand."""
    VERBOSITY[0] = 0
    for each in _parsers(parser):
        if each is parser:
            continue
        group = each.add_mutually_exclusive_group()
        group.add_argument(
            "-v",
            "--verbose",
            action=_Verbosity,
            step=1,
            config=config,
            help="also say which configuration file set which defaults",
        )
        group.add_argument(
            "-q",
            "--quiet",
            action=_Verbosity,
            step=-1,
            help="no progress lines (warnings, errors and the outcome still print)",
        )


def configured(parser: argparse.ArgumentParser, start: Path | None = None) -> argparse.ArgumentParser:
    """`parser` with abbreviations off everywhere, `-v`/`-q` on each command and the configuration's defaults; a
    bad configuration is one line on stderr and exit 2."""
    try:
        config = load_config(start)
    except ConformanceError as exc:
        print(f"jax-conformance: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    for each in _parsers(parser):
        each.allow_abbrev = False
    apply_config(parser, config)
    add_verbosity(parser, config)
    return parser

"""Named matrices of JAX versions (`matrix/<name>.toml`), read and checked.

A matrix lists its versions (`versions = ["0.4.38", ...]`), or names releases of the package
index: `newest = N` (the newest patch of each of the N newest minor series) or `since = "V"`
(every final release from V on, patch releases included), so that a new JAX release joins it
without editing anything; `resolve_versions` turns the latter into versions, given the
releases the index knows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from packaging.version import InvalidVersion, Version

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from conformance.errors import ConformanceError
from conformance.readfile import read_regular_text
from conformance.results.schema import is_version
from conformance.results.versions import normalized_or_same

MATRIX_DIR = Path(__file__).resolve().parents[2] / "matrix"
DEFAULT_MATRIX = "default"


@dataclass(frozen=True)
class Matrix:
    """A named list of JAX versions to run."""

    name: str
    versions: tuple[str, ...]
    newest: int = 0  # when set, the newest patch of each of this many newest minor series
    since: str = ""  # when set, every final release from this one on

    @property
    def from_index(self) -> bool:
        """Whether the versions are read from the package index rather than listed."""
        return bool(self.newest or self.since)


def matrix_path(name_or_path: str, matrix_dir: Path = MATRIX_DIR) -> Path:
    """The file of a matrix given by name (`quick`) or by path (`my.toml`); names are looked up first,
    so a local folder called `quick` does not shadow the `quick` matrix."""
    named = matrix_dir / f"{name_or_path}.toml"
    if "/" not in name_or_path and "\\" not in name_or_path and named.is_file():
        return named
    candidate = Path(name_or_path)
    if candidate.suffix == ".toml" or candidate.exists():
        return candidate
    return named


def available_matrices(matrix_dir: Path = MATRIX_DIR) -> list[str]:
    """Names of the matrices shipped in `matrix_dir`."""
    return sorted(p.stem for p in matrix_dir.glob("*.toml"))


def parse_matrix(text: str, name: str, source: str) -> Matrix:
    """A matrix from TOML text; one-line errors name `source` and what is wrong."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConformanceError(f"matrix file {source} does not parse as TOML: {exc}") from None
    since = data.get("since")
    if since is not None:
        if not is_version(since) or "versions" in data or "newest" in data:
            raise ConformanceError(
                f'matrix file {source}: `since` must be a JAX version such as "0.4.38", '
                f"and stands instead of `versions` and `newest`"
            )
        return Matrix(name=name, versions=(), since=since)
    newest = data.get("newest")
    if newest is not None:
        if not isinstance(newest, int) or isinstance(newest, bool) or newest < 1 or "versions" in data:
            raise ConformanceError(
                f"matrix file {source}: `newest` must be a positive whole number, and stands instead of `versions`"
            )
        return Matrix(name=name, versions=(), newest=newest)
    versions = data.get("versions")
    if not isinstance(versions, list) or not versions or not all(isinstance(v, str) and v for v in versions):
        raise ConformanceError(
            f'matrix file {source} needs `versions = ["0.4.38", ...]`, a non-empty list of JAX version strings'
        )
    bad = [v for v in versions if not is_version(v)]
    if bad:
        raise ConformanceError(f"matrix file {source}: {bad[0]!r} is not a JAX version such as 0.4.38")
    versions = [normalized_or_same(v) for v in versions]  # `v0.4.38` is 0.4.38, as result files name it
    if len(set(versions)) != len(versions):
        raise ConformanceError(f"matrix file {source} lists a JAX version twice")
    return Matrix(name=name, versions=tuple(versions))


def load_matrix(name_or_path: str, matrix_dir: Path = MATRIX_DIR) -> Matrix:
    """Read a matrix by name or path."""
    path = matrix_path(name_or_path, matrix_dir)
    if not path.exists():
        known = ", ".join(available_matrices(matrix_dir)) or "none"
        raise ConformanceError(f"no matrix '{name_or_path}' ({path} does not exist); known matrices: {known}")
    try:
        text = read_regular_text(path, 1024 * 1024)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConformanceError(f"cannot read matrix file {path}: {exc}") from None
    return parse_matrix(text, path.stem, str(path))


def resolve_versions(matrix: Matrix, released: Iterable[str], pre: bool = False) -> tuple[str, ...]:
    """The matrix's versions, oldest first: its list; every final release from `since` on; or the newest patch
    of each of its `newest` minor series among `released` (final releases only; with `pre`, pre-releases and dev
    builds too, as `--pre` asks). Builds with a local label are never on the list. Pure."""
    if not matrix.from_index:
        return matrix.versions
    finals: dict[tuple[int, int], tuple[Version, str]] = {}
    every: list[tuple[Version, str]] = []
    for text in released:
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if (version.is_prerelease or version.is_devrelease) and not pre or version.local or not is_version(text):
            continue
        every.append((version, text))
        series = (version.major, version.minor)
        if series not in finals or version > finals[series][0]:
            finals[series] = (version, text)
    if not finals:
        raise ConformanceError(f"matrix {matrix.name}: the package index lists no final JAX release")
    if matrix.since:
        chosen = sorted(pair for pair in every if pair[0] >= Version(matrix.since))
        if not chosen:
            raise ConformanceError(
                f"matrix {matrix.name}: the package index lists no JAX release from {matrix.since} on"
            )
        return tuple(text for _, text in chosen)
    newest = sorted(finals)[-matrix.newest :]
    return tuple(finals[series][1] for series in newest)


def matrix_versions(name_or_path: str, index) -> list[str]:
    """The versions of a named matrix; one that names releases of the package index (`latest`, `all`) asks `index`."""
    matrix = load_matrix(name_or_path)
    if not matrix.from_index:
        return list(matrix.versions)
    options = getattr(index, "options", None)
    return list(resolve_versions(matrix, index.releases("jax"), pre=bool(getattr(options, "pre", False))))


def chosen_versions(jax: Iterable[str] | None, matrix: str | None, builder, others: bool = False) -> list[str]:
    """The releases a command runs on: each `--jax` release once, in order; else none when only other targets (builds,
    interpreters: `others`) were given and no `--matrix`; else the matrix's (the default matrix when none is named),
    the only case that asks `builder.index` (so a command given its releases touches no index before its checks)."""
    if jax:
        return list(dict.fromkeys(jax))
    return [] if others and not matrix else matrix_versions(matrix or DEFAULT_MATRIX, builder.index)


def expand_words(words: Iterable[str], index, resolve=matrix_versions) -> list[str]:
    """The JAX versions that words name, in order, each once: a version (not an existing path) as it is, a matrix
    name or `.toml` path as its versions (`resolve(word, index)`; `latest` asks the index)."""
    found: list[str] = []
    for word in words:
        # a version in any spelling packaging reads (`v0.4.38`, `0.5.0-rc1`) as its one spelling, `0.5.0rc1`
        found += [normalized_or_same(word)] if is_version(word) and not Path(word).exists() else resolve(word, index)
    return list(dict.fromkeys(found))

"""Named matrices of JAX versions (`matrix/<name>.toml`), read and checked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from conformance.errors import ConformanceError
from conformance.results.schema import is_version

MATRIX_DIR = Path(__file__).resolve().parents[2] / "matrix"
DEFAULT_MATRIX = "default"


@dataclass(frozen=True)
class Matrix:
    """A named list of JAX versions to run."""

    name: str
    versions: tuple[str, ...]


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
    versions = data.get("versions")
    if not isinstance(versions, list) or not versions or not all(isinstance(v, str) and v for v in versions):
        raise ConformanceError(
            f'matrix file {source} needs `versions = ["0.4.38", ...]`, a non-empty list of JAX version strings')
    if len(set(versions)) != len(versions):
        raise ConformanceError(f"matrix file {source} lists a JAX version twice")
    bad = [v for v in versions if not is_version(v)]
    if bad:
        raise ConformanceError(f"matrix file {source}: {bad[0]!r} is not a JAX version such as 0.4.38")
    return Matrix(name=name, versions=tuple(versions))


def load_matrix(name_or_path: str, matrix_dir: Path = MATRIX_DIR) -> Matrix:
    """Read a matrix by name or path."""
    path = matrix_path(name_or_path, matrix_dir)
    if not path.exists():
        known = ", ".join(available_matrices(matrix_dir)) or "none"
        raise ConformanceError(f"no matrix '{name_or_path}' ({path} does not exist); known matrices: {known}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConformanceError(f"cannot read matrix file {path}: {exc}") from None
    return parse_matrix(text, path.stem, str(path))

"""The suite's installed source scanned with `api scan` against the candidate: a removed JAX name the tests never reach
still shows in `downstream`'s output.

- `library_files` (pure): the `.py` files of the library's own packages as installed (`site-packages/<package>`, or a
  team folder's packages), its test files aside (`*_test.py`, `test_*.py`, `conftest.py`, anything under a `tests`
  or `test` folder): those the run itself judges.
- `scan_source`: `api scan` itself (`api.session.run_scan`: the same uses, censuses and judge, the candidate's
  census taken or answered from storage as `api scan --to` does), its findings kept.
- `scan_lines` (pure): one line per used name that the candidate removed or lacks, with its count of places and the
  first, paths relative to where the source lies; then the same for such names used inside a guard (api scan's
  `guarded`: a guard covers only the names it tests, so chex's `hasattr(jax, "Array")` around
  `jax.sharding.PmapSharding` is a break above, not here), still said rather than hidden because a fallback branch
  or a version check guards every name in it, and on the candidate that may be the code that runs; and the count of
  deprecated names in use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from conformance.api.judge import BREAKING, Finding
from conformance.api.session import ScanRequest, python_files, run_scan

TEST_FOLDERS = ("tests", "test")


def _is_test(path: Path) -> bool:
    name = path.name
    return (
        name.endswith("_test.py")
        or name.startswith("test_")
        or name == "conftest.py"
        or any(part in TEST_FOLDERS for part in path.parts[:-1])
    )


def library_files(root: Path, packages: Sequence[str]) -> list[Path]:
    """The library's own non-test `.py` files under `root` (its packages' folders, or `<package>.py` modules)."""
    found: list[Path] = []
    for package in packages:
        folder, module = root / package, root / f"{package}.py"
        if folder.is_dir():
            found += [p for p in python_files([folder]) if not _is_test(p.relative_to(root))]
        elif module.is_file():
            found.append(module)
    return found


def scan_source(
    files: Sequence[Path], to: str, results: Path, builder: Callable[[], Any], say: Callable[[str], None]
) -> list[Finding]:
    """The `api scan` findings of `files` against `to` (a release, or a census file as `api scan --to` takes)."""
    return run_scan(ScanRequest(tuple(files), to, results=results), builder, say).findings


def scan_lines(findings: Sequence[Finding], root: Path, what: str, to: str, files: int) -> list[str]:
    """What `downstream` prints of a scan of `what` (`chex's installed source`; see the module's docstring); relative
    paths where they lie under `root`."""
    breaking: dict[tuple[str, str], list[Finding]] = {}
    guarded: dict[tuple[str, str], list[Finding]] = {}
    deprecated = set()
    for finding in findings:
        if finding.state in BREAKING:
            breaking.setdefault((finding.name, finding.state), []).append(finding)
        elif finding.state == "guarded":
            guarded.setdefault((finding.name, finding.state), []).append(finding)
        elif finding.state == "deprecated":
            deprecated.add(finding.name)
    said = f"{len(breaking)} used name{'s' if len(breaking) != 1 else ''} removed or missing"
    if guarded:
        said += f", {len(guarded)} more inside a guard"
    if deprecated:
        said += f", {len(deprecated)} deprecated"
    lines = [f"  api scan of {what} ({files} file{'s' if files != 1 else ''}) against jax {to}: {said}"]
    for (name, state), where in [*sorted(breaking.items()), *sorted(guarded.items())]:
        first = where[0]
        try:
            path = Path(first.path).relative_to(root).as_posix()
        except ValueError:
            path = first.path
        more = f" and {len(where) - 1} more place{'s' if len(where) > 2 else ''}" if len(where) > 1 else ""
        if state == "guarded":
            why = first.message.rsplit(" (", 1)[-1].rstrip(")") if " (" in first.message else "a guard"
            lines.append(f"    guarded (absent on jax {to}; {why}): {name} at {path}:{first.line}{more}")
        else:
            lines.append(f"    {state} since {first.since}: {name} at {path}:{first.line}{more}")
    return lines

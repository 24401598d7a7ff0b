"""Publishing a run's data: one merged result file per (JAX version, platform), and `index.json` naming each.

The CI's report job has the restored results of the last published run and the shard files of this run in one
folder. `publish_results(inputs, out)` merges them, per version and platform, through the results store (files
in the order their runs finished, so a cell run now replaces the restored one; cells of cases this checkout no
longer declares are dropped; the header's `shard` is cleared), and writes `out/index.json`: for each file its
name, sha256, size, JAX version, platform and suite version, with the date, commit and suite version of the
publication. `restore` reads that folder back; `report`, `diff` and `gate` read it as any results folder
(`index.json` is not named like a result file, so it is never read as one).

The report job calls it through `.github/scripts/publish_results.py --out site/results [--date YYYY-MM-DD]
[--commit SHA] FOLDER...` (that script parses the command line: `cli.py` is the package's one argparse user).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import conformance
from conformance.atomic import write_text_atomically
from conformance.results.load import read_results_tolerantly
from conformance.results.merge import retired_cells
from conformance.results.schema import build_identity
from conformance.results.store import ResultStore

INDEX_NAME = "index.json"
INDEX_FORMAT = 1


@dataclass
class Published:
    """What a publication wrote: the result files (in `out`), the index, and the input files it could not read."""

    out: Path
    files: list[Path] = field(default_factory=list)
    index: Path | None = None
    problems: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """What to tell the job's log: one line per skipped file, one for the publication."""
        skipped = [f"jax-conformance: publish: skipped unreadable result file {p}" for p in self.problems]
        return skipped + [f"published {len(self.files)} result file(s) and {INDEX_NAME} in {self.out}"]


def sha256_of(path: Path) -> str:
    """The sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def index_entry(path: Path) -> dict[str, Any]:
    """The index's entry for a published result file (its name says its version and platform)."""
    header = json.loads(path.read_text(encoding="utf-8")).get("jax_conformance") or {}
    return {
        "name": path.name,
        "sha256": sha256_of(path),
        "size": path.stat().st_size,
        "jax": header.get("jax"),
        "platform": header.get("platform"),
        "suite_version": header.get("suite_version", ""),
    }


def write_index(out: Path, files: Sequence[Path], date: str, commit: str = "") -> Path:
    """Write `out/index.json` for the result files `files` (in `out`)."""
    index = {
        "format": INDEX_FORMAT,
        "date": date,
        "commit": commit,
        "suite_version": conformance.__version__,
        "files": [index_entry(path) for path in sorted(files)],
    }
    path = out / INDEX_NAME
    write_text_atomically(path, json.dumps(index, indent=1) + "\n")
    return path


def publish_results(
    inputs: Sequence[Path], out: Path, date: str, commit: str = "", retired: Callable[[str], bool] | None = None
) -> Published:
    """Merge every readable release result file of `inputs` into one file per (version, platform) in `out` (which
    should start empty), and write the index. `retired` (default: cells of built-in cases this checkout does not
    declare) says which stored cells to drop. A build of its own (`--wheels`, `--python`) is not published."""
    if retired is None:
        from conformance.core.case import load_cases
        from conformance.engine.selection import all_cells

        retired = retired_cells(cell.id for cell in all_cells(load_cases()))
    loaded = read_results_tolerantly(inputs)
    published = Published(out, problems=list(loaded.problems))
    store = ResultStore(out)
    written: dict[Path, None] = {}
    for result in sorted(loaded.files, key=lambda f: (f.header.finished_at, f.source)):
        if build_identity(result.header.source):
            continue
        data = json.loads(Path(result.source).read_text(encoding="utf-8"))
        data["jax_conformance"]["shard"] = ""  # the merged file holds every shard
        written[store.merge_run(data, retired=retired).path] = None
    for own in [*out.glob(".*.lock"), *out.glob(".*.stored")]:  # the store's locks and records: no part of the site
        own.unlink(missing_ok=True)
    published.files = sorted(written)
    published.index = write_index(out, published.files, date, commit)
    return published

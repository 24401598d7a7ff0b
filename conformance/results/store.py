"""The results store: one folder of result files, and the only code that writes into it.

`ResultStore(folder).merge_run(data, retired=..., shard_suffix=...)` folds a new pytest-json-report
run into the result file of its JAX version and platform, under a file lock, so runs sharing a
folder never lose each other's cells: cells not run this time keep their stored results, stored
cells of cases no longer declared are dropped, the run headers are merged, and a stored file that
cannot be read is set aside (kept under a hidden name, never read again) and said so. `run`,
`gate --from/--to`, `bisect` and `chapter` all store through it. Before anything is stored, every credential this
process knows (`childenv.known_secrets`: the values of the variables no child is given, URLs' user information)
is masked in what the children wrote (`scrub.mask_secrets`). `reusable_cells` reads the stored cells a
new run may reuse (the pytest plugin's `--jax-reuse`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from filelock import FileLock
from packaging.version import Version

from conformance.atomic import write_text_atomically
from conformance.childenv import known_secrets
from conformance.core.case import DEFAULT_CASE_PACKAGE
from conformance.results.merge import merge_report_json, retired_stored_cells
from conformance.errors import ConformanceError
from conformance.scrub import mask_secrets
from conformance.results.schema import (
    SCHEMA_VERSION,
    CellResult,
    RunHeader,
    SchemaError,
    build_identity,
    result_file_from_json,
    unjudged_cell,
)

# The launcher a run header records when the run started no child: every cell was reused.
REUSED_ONLY = "none (every cell reused)"


def result_name(jax: str, platform: str, shard_suffix: str = "") -> str:
    """The file name of a version's results on a platform: `<jax>-<platform>[-shard<K>of<N>].json`."""
    return f"{jax}-{platform}{shard_suffix}.json"


@dataclass
class SetAside:
    """A stored file that could not be merged into: where it was kept, and why it was unreadable."""

    path: Path
    kept_as: Path
    why: str

    def describe(self) -> str:
        """One line for a person."""
        return f"{self.path} could not be merged into ({self.why}); kept it as {self.kept_as.name} and wrote a new one"


@dataclass
class Stored:
    """What one merge did: the file written, the retired cells dropped, a file set aside (or None), and stored
    cells that could not be read (dropped one by one, named; the file's other cells are kept)."""

    path: Path
    dropped: list[str] = field(default_factory=list)
    set_aside: SetAside | None = None
    unreadable_cells: list[str] = field(default_factory=list)


def _written_record(path: Path) -> Path:
    return path.with_name(f".{path.name}.stored")


def write_result_text(path: Path, text: str) -> None:
    """Write a result file's text atomically and record its digest beside it (`.NAME.stored`): what the store
    itself last wrote, so that `written_by_store` can tell a locked writer's change (`run`, `perf`, a chapter) from
    a file rewritten behind the store's back (a chapter's block that writes into the results folder). Called under
    the file's lock."""
    write_text_atomically(path, text)
    write_text_atomically(_written_record(path), hashlib.sha256(path.read_bytes()).hexdigest() + "\n")


def written_by_store(path: Path) -> bool:
    """Whether the result file at `path` is, byte for byte, what the store last wrote there (`write_result_text`);
    False when there is no record, no file, or either cannot be read."""
    try:
        recorded = _written_record(path).read_text(encoding="utf-8").strip()
        return hashlib.sha256(path.read_bytes()).hexdigest() == recorded
    except OSError:
        return False


def merged_header(stored: Any, new: dict[str, Any]) -> dict[str, Any]:
    """The header of a merged result file: the new run's, keeping the case folders earlier runs recorded, and the
    launcher of the run before when this one only reused cells."""
    head = dict(new)
    if new.get("launcher") == REUSED_ONLY and isinstance(stored, dict) and stored.get("launcher"):
        head["launcher"] = stored["launcher"]  # this run started nothing: the cells came from that one
    folders = {f.get("name"): f for f in (stored or {}).get("case_folders") or [] if isinstance(f, dict)}
    folders.update({f.get("name"): f for f in new.get("case_folders") or [] if isinstance(f, dict)})
    head["case_folders"] = sorted(folders.values(), key=lambda f: str(f.get("name")))
    if isinstance(stored, dict) and new.get("case_package") != DEFAULT_CASE_PACKAGE and stored.get("case_package"):
        head["case_package"] = stored["case_package"]
    return head


def reusable_cells(
    path: str | os.PathLike | None, jax_version: str, platform: str, shard_suffix: str = ""
) -> dict[str, CellResult]:
    """The stored results a run may reuse, by cell id: a result file, or the file of this version and platform
    in a folder (the shard's own file first, then the unsharded one, in a sharded run). Nothing readable: {}."""
    path = os.fspath(path) if path else None
    if path and os.path.isdir(path):
        names = [result_name(jax_version, platform, shard_suffix)] if shard_suffix else []
        names.append(result_name(jax_version, platform))
        found = [os.path.join(path, n) for n in names if os.path.exists(os.path.join(path, n))]
        path = found[0] if found else None
    if not path or not os.path.exists(path):
        return {}
    try:
        loaded = result_file_from_json(json.loads(Path(path).read_text(encoding="utf-8")), path)
    except (OSError, ValueError, SchemaError):
        return {}  # nothing reusable; every cell runs
    return {c.cell_id: c for c in loaded.cells}


@dataclass
class ResultStore:
    """A folder of result files, one per (JAX version, platform[, shard])."""

    folder: Path

    def path_for(self, jax: str, platform: str, shard_suffix: str = "") -> Path:
        """Where the results of a version on a platform (and shard) are stored."""
        return self.folder / result_name(jax, platform, shard_suffix)

    def target_folders(self, targets: Sequence[tuple[str, str]]) -> list[Path]:
        """Where each target of one run stores its results, in order; `targets` are `(version, own_name)`: a release
        (`own_name` empty) in this folder; a given build here too, unless its version is also run as a release or by
        an earlier build (an image's jax 0.12.0.1 gated against the release 0.12.0.1), then in `builds/<own_name>/`,
        so that a build is never stored as the release of the same version."""
        taken = {version for version, own in targets if not own}
        folders = []
        for version, own in targets:
            apart = own and (version in taken or not Version(version).local)  # no label of its own: a release's
            folders.append(self.folder / "builds" / own if apart else self.folder)
            taken.add(version)
        return folders

    def refuse_newer_files(self) -> None:
        """Raise `ConformanceError` (before any work) when a result file in the folder was written by a newer
        jax-conformance: merging into it would lose what that version wrote."""
        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.glob("*.json")):
            try:
                header = json.loads(path.read_text(encoding="utf-8")).get("jax_conformance") or {}
                schema = header.get("schema_version")
            except (OSError, ValueError, AttributeError, RecursionError):
                continue  # unreadable files are set aside at the merge, as always
            if isinstance(schema, int) and not isinstance(schema, bool) and schema > SCHEMA_VERSION:
                raise ConformanceError(
                    f"{path} was written by a newer jax-conformance (result schema {schema}; this one writes "
                    f"{SCHEMA_VERSION}); upgrade jax-conformance, or give this run another --results folder"
                )

    def reusable_cells(self, jax: str, platform: str, shard_suffix: str = "") -> dict[str, CellResult]:
        """The stored cells of a version and platform that a new run may reuse, by cell id."""
        return reusable_cells(self.folder, jax, platform, shard_suffix)

    def merge_run(
        self,
        data: Mapping[str, Any],
        *,
        retired: Callable[[str], bool] = lambda cell_id: False,
        shard_suffix: str = "",
        stored_as: Callable[[dict[str, Any] | None], dict[str, Any] | None] | None = None,
    ) -> Stored:
        """Merge a finished run (a pytest-json-report object with the suite's header) into its version's file.

        The file is locked while it is read, merged and replaced. Cells the run did not run keep their
        stored results; stored cells for which `retired(cell_id)` holds are dropped (and listed). `stored_as`
        (given by `chapter`) may correct the stored file as read, under the lock, before the merge: the probe
        cells as they were before a chapter's blocks ran, whatever a block wrote meanwhile.
        """
        data = mask_secrets(data, known_secrets(os.environ))  # what a child wrote, before it is stored
        head = data.get("jax_conformance") or {}
        self.folder.mkdir(parents=True, exist_ok=True)
        final = self.path_for(str(head["jax"]), str(head["platform"]), shard_suffix)
        with FileLock(str(self.folder / f".{final.name}.lock")):
            stored, aside, bad = self.read_stored(final, str(head["jax"]), str(head["platform"]))
            if stored_as is not None:
                stored = stored_as(stored)
            if stored is not None and aside is None:
                stored, aside = self._apart_from_other_build(final, stored, head)
            dropped = retired_stored_cells(stored, data, retired)
            merged = merge_report_json(stored, data, retired=retired)
            merged["jax_conformance"] = merged_header((stored or {}).get("jax_conformance"), dict(head))
            write_result_text(final, json.dumps(merged, indent=1))
        return Stored(final, dropped, aside, bad)

    def _apart_from_other_build(
        self, path: Path, stored: dict[str, Any], head: Mapping[str, Any]
    ) -> tuple[dict[str, Any] | None, SetAside | None]:
        """A stored file of a release when a build runs (or of a build when the release runs) is never merged into:
        it is set aside, kept, and the run starts a file of its own."""
        before = build_identity((stored.get("jax_conformance") or {}).get("source"))
        now = build_identity(head.get("source"))
        if bool(before) == bool(now):
            return stored, None
        what = f"another build ({before})" if before else "the release"
        aside = self._free_aside_name(path, "other-build")
        os.replace(path, aside)
        return None, SetAside(
            path, aside, f"it holds the results of {what}, not of another build ({now or 'the release'})"
        )

    def _free_aside_name(self, path: Path, why: str) -> Path:
        """`.NAME.<why>-<time>` for a file set aside, with `-2`, `-3`, ... when a file set aside in the same second
        already holds that name (replacing it would lose the results it keeps)."""
        first = self.folder / f".{path.name}.{why}-{int(time.time())}"
        aside, number = first, 1
        while aside.exists():
            number += 1
            aside = first.with_name(f"{first.name}-{number}")
        return aside

    def read_stored(
        self, path: Path, jax: str | None = None, platform: str | None = None
    ) -> tuple[dict[str, Any] | None, SetAside | None, list[str]]:
        """The stored result file to merge into (or None), a set-aside file (or None), and the cells dropped
        as unreadable.

        - A file written by a newer jax-conformance (a newer schema) is refused with `ConformanceError`:
          two versions of the tool sharing a folder must not destroy each other's results.
        - A file that is unreadable as a whole, or whose header names another JAX version or platform than
          its name (a copy, a symlink), is set aside (never lost, never read as a result again); the merge
          then starts afresh.
        - A readable file with some unreadable cells keeps its other cells; the bad ones are named.
        """
        if not path.exists():
            return None, None, []
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            header = data.get("jax_conformance") if isinstance(data, dict) else None
            schema = header.get("schema_version") if isinstance(header, dict) else None
            if isinstance(schema, int) and not isinstance(schema, bool) and schema > SCHEMA_VERSION:
                raise ConformanceError(
                    f"{path} was written by a newer jax-conformance (result schema {schema}; this one writes "
                    f"{SCHEMA_VERSION}); upgrade jax-conformance, or give this run another --results folder"
                )
            if not isinstance(header, dict) or not isinstance(data.get("tests"), list):
                raise SchemaError("not a result file of the suite (no header or no tests)")
            read = RunHeader.from_json(header)
            if (jax, platform) != (None, None) and (read.jax, read.platform) != (jax, platform):
                raise SchemaError(
                    f"its header says jax {read.jax} on {read.platform}, not jax {jax} on {platform}; "
                    f"a copied or linked file of another run"
                )
            bad = _drop_unreadable_cells(data)
            result_file_from_json(data, str(path))
            return data, None, bad
        except (OSError, ValueError, SchemaError, RecursionError) as exc:
            why = " ".join(str(exc).split())[:200]
        aside = self._free_aside_name(path, "unreadable")
        os.replace(path, aside)
        return None, SetAside(path, aside, why), []


def _drop_unreadable_cells(data: dict[str, Any]) -> list[str]:
    """Remove from `data["tests"]` every entry whose cell cannot be read, and name each (never the whole file for
    one cell)."""
    kept, bad = [], []
    for i, test in enumerate(data["tests"]):
        try:
            if not isinstance(test, dict):
                raise SchemaError("not an object")
            if test.get("metadata") is not None:
                CellResult.from_json(test["metadata"], f"tests[{i}].metadata")
            elif unjudged_cell(test) is None:
                raise SchemaError("no cell metadata and no node id")
            kept.append(test)
        except (SchemaError, RecursionError, TypeError, ValueError) as exc:
            name = test.get("nodeid") if isinstance(test, dict) else None
            bad.append(f"{name or f'tests[{i}]'} ({' '.join(str(exc).split())[:120]})")
    data["tests"] = kept
    return bad

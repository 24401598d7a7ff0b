"""Where a chapter's block cells are kept: the same result files and store as the probes'.

- `stored_blocks`: the cells a results folder already holds for every block of the chapter on a release, when all
  of them are still good (then the release is neither built nor run): the release's pin file is the one its run
  installed, the Python chosen for it is the one it ran on, and every block's reuse key, computed with the stored
  environment digest, is the stored one (`cells.block_keys`). A chapter runs in one process, so it is answered
  whole or run whole: one changed block runs the chapter again.
- `store_blocks`: merges a release's block cells into `<jax>-<platform>.json` through `results.store.ResultStore`
  (locked, atomic; the probes' cells of the file are kept). Cells of this chapter's blocks that the chapter no
  longer has (edited or removed blocks) are dropped there. The file's header stays the probes' run header when it
  describes the same environment, so a chapter run never changes what the probes' cells say about their run.
- `probe_snapshot` and `as_before`: the release's probe cells and header read before its blocks run, and put back
  as they were when the blocks are stored (a block can write to any file its user can; what it wrote into the result
  file meanwhile is not kept), unless the file is byte for byte what the store last wrote (`written_by_store`): then
  a locked writer (`run`, `perf`, another chapter) changed it meanwhile, and its cells are kept.
- `describe`: the target environment's versions, platform and packages (one short child, as the plugin asks).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Mapping

import conformance
from conformance.chapter.cells import LAUNCHER, case_id, chapter_ident, test_entry
from conformance.chapter.model import Chapter
from conformance.core.case import DEFAULT_CASE_PACKAGE
from conformance.engine.keys import environment_digest
from conformance.childenv import child_environment
from conformance.errors import ConformanceError
from conformance.portable import run_bounded
from conformance.results.load import ResultsError, load_result_file
from conformance.results.schema import CHAPTER_NAMESPACE, CellResult, RunHeader, utc_now
from conformance.results.store import ResultStore, Stored, written_by_store

DESCRIBE_TIMEOUT_S = 120


def describe(python: str) -> dict[str, Any]:
    """The environment of `python` as `conformance.child.envinfo` describes it; one-line `ConformanceError` when it
    cannot (bounded in time and output)."""
    with tempfile.TemporaryDirectory(prefix="jaxconf-env-") as workdir:
        out = os.path.join(workdir, "env.json")
        try:
            done = run_bounded(
                [python, "-m", "conformance.child.envinfo", "--out", out],
                env=child_environment(os.environ, {}),
                timeout=DESCRIBE_TIMEOUT_S,
                limit=8192,
            )
        except (OSError, RuntimeError) as exc:  # no process or thread could be started (the user's are all taken)
            raise ConformanceError(f"could not describe the environment of {python}: {exc}") from None
        if not os.path.exists(out):
            said = (done.output.strip().splitlines() or ["no output"])[-1]
            why = "did not answer in time" if done.timed_out else said
            raise ConformanceError(f"could not describe the environment of {python}: {why[:300]}")
        return json.loads(Path(out).read_text(encoding="utf-8"))


def digest_of(described: Mapping[str, Any]) -> str:
    """The environment digest reuse keys hold (`engine.keys.environment_digest`)."""
    return environment_digest(dict(described.get("packages") or {}), str(described.get("python") or ""))


def stored_blocks(
    folder: Path,
    version: str,
    platform: str,
    chapter: Chapter,
    pins_digest: str | None,
    python: str,
    keys_for: Callable[[str], Mapping[str, str]],
) -> dict[str, CellResult] | None:
    """Every block's stored cell, by block id, when the folder answers the whole chapter on `version` (see the
    module's docstring); None otherwise. `keys_for(environment_digest)` gives the keys the blocks would get."""
    path = ResultStore(folder).path_for(version, platform)
    if pins_digest is None or not path.is_file():
        return None
    try:
        stored = load_result_file(path)
    except (ResultsError, OSError):
        return None
    head = stored.header
    if not head.environment_digest or head.pins_hash != pins_digest or head.python != python:
        return None
    keys = keys_for(head.environment_digest)
    cells = {c.case: c for c in stored.cells}
    found = {}
    for block in chapter.blocks:
        cell = cells.get(case_id(chapter, block))
        if cell is None or cell.key != keys[block.id]:
            return None
        found[block.id] = cell
    return found


def run_header(described: Mapping[str, Any], env: Any, started_at: str, wall_s: float) -> dict[str, Any]:
    """The run header of a chapter's run on one environment."""
    return RunHeader(
        jax=str(described.get("jax")),
        platform=str(described.get("platform")),
        suite_version=conformance.__version__,
        jaxlib=described.get("jaxlib"),
        numpy=described.get("numpy"),
        python=described.get("python"),
        backend=described.get("backend"),
        devices=[str(d) for d in described.get("devices") or []],
        case_package=DEFAULT_CASE_PACKAGE,
        launcher=LAUNCHER,
        pins_hash=getattr(env, "pins_hash", "") or "",
        environment_digest=digest_of(described),
        started_at=started_at,
        finished_at=utc_now(),
        wall_s=round(wall_s, 3),
        source=dict(getattr(env, "source", None) or {}),
        jax_git_hash=str(described.get("jax_git_hash") or ""),
        jaxlib_git_hash=str(described.get("jaxlib_git_hash") or ""),
    ).to_json()


def probe_snapshot(folder: Path, version: str, platform: str) -> dict[str, Any] | None:
    """The release's result file as it is before a chapter's blocks run: its header and the cells that are not a
    chapter's (`{"exists": False}` when there is none; None when it cannot be read, and then nothing is restored)."""
    path = ResultStore(folder).path_for(version, platform)
    if not path.is_file():
        return {"exists": False, "path": path}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        tests = [t for t in data["tests"] if not _of_a_chapter(t)]
        return {"exists": True, "header": data["jax_conformance"], "tests": tests, "path": path}
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None


def _of_a_chapter(test: Any) -> bool:
    return isinstance(test, dict) and str(test.get("nodeid", "")).startswith(f"{CHAPTER_NAMESPACE}/")


def as_before(
    snapshot: dict[str, Any] | None, changed: list[str]
) -> Callable[[dict[str, Any] | None], dict[str, Any] | None]:
    """For `ResultStore.merge_run(stored_as=...)`: the stored file with its probe cells and header as `snapshot`
    holds them (a block may have rewritten the file while it ran: S14); the chapters' cells as stored now (another
    chapter may have stored its own meanwhile). What was put back is said in `changed`."""

    def restore(stored: dict[str, Any] | None) -> dict[str, Any] | None:
        if snapshot is None:
            return stored
        probes = snapshot.get("tests", []) if snapshot["exists"] else []
        if stored is None:
            if snapshot["exists"]:
                changed.append("the result file was removed while the blocks ran; its probe cells are kept")
                return {
                    "created": time.time(),
                    "duration": 0.0,
                    "exitcode": 0,
                    "root": "",
                    "environment": {},
                    "summary": {},
                    "tests": list(probes),
                    "jax_conformance": snapshot["header"],
                }
            return None
        if snapshot.get("path") is not None and written_by_store(snapshot["path"]):
            # Changed only by a locked writer of the store (`run`, `perf`, another chapter): its cells are results,
            # not a block's doing, and are kept (putting the snapshot back lost a concurrent run's 197 cells).
            return stored
        now = [t for t in stored.get("tests", []) if not _of_a_chapter(t)]
        header = snapshot["header"] if snapshot["exists"] else stored.get("jax_conformance")
        if now != probes or header != stored.get("jax_conformance"):
            changed.append("its probe cells or header changed while the blocks ran; kept as they were before")
        chapters = [t for t in stored.get("tests", []) if _of_a_chapter(t)]
        return {**stored, "tests": list(probes) + chapters, "jax_conformance": header}

    return restore


def store_blocks(
    folder: Path,
    chapter: Chapter,
    cells: Mapping[str, CellResult],
    header: dict[str, Any],
    stored_as: Callable[[dict[str, Any] | None], dict[str, Any] | None] | None = None,
) -> Stored:
    """Merge the chapter's block cells of one release into its result file (see the module's docstring);
    `stored_as`: `as_before` the blocks ran."""
    store = ResultStore(folder)
    store.refuse_newer_files()
    path = store.path_for(str(header["jax"]), str(header["platform"]))
    head = dict(header)
    if path.is_file():
        try:
            kept = load_result_file(path).header
        except (ResultsError, OSError):
            kept = None
        if kept is not None and kept.environment_digest == header.get("environment_digest"):
            head = kept.to_json()  # the same environment: the probes' run header stays as it was
    refuse_another_chapter(path, chapter)
    by_block = {block.id: block for block in chapter.blocks}
    data = {
        "created": time.time(),
        "duration": float(header.get("wall_s") or 0.0),
        "exitcode": 0,
        "root": "",
        "environment": {},
        "summary": {},
        "tests": [test_entry(chapter, by_block[block_id], cell) for block_id, cell in cells.items()],
        "jax_conformance": head,
    }
    ours = f"{CHAPTER_NAMESPACE}/{chapter_ident(chapter.name)}."
    return store.merge_run(data, retired=lambda cell_id: cell_id.startswith(ours), stored_as=stored_as)


def refuse_another_chapter(path: Path, chapter: Chapter) -> None:
    """A one-line `ConformanceError` when the result file at `path` holds blocks of another chapter file whose cell
    ids are this chapter's (`my-guide.md` and `my_guide.md`, `intro.md` and `intro.ipynb`): storing would drop them."""
    if not path.is_file():
        return
    try:
        cells = load_result_file(path).cells
    except (ResultsError, OSError):
        return
    ours = f"{CHAPTER_NAMESPACE}/{chapter_ident(chapter.name)}."
    source = Path(chapter.path).name
    for cell in cells:
        details = cell.details if isinstance(cell.details, dict) else {}
        held = str(details.get("source") or details.get("chapter") or "")
        if cell.case.startswith(ours) and held not in (source, chapter.name):
            raise ConformanceError(
                f"{path} holds the blocks of chapter {held} under the same cell ids as {source} "
                f"({chapter_ident(chapter.name)}); give this chapter a --results folder of its "
                f"own, or rename one of the two files"
            )

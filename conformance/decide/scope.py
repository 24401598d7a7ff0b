"""What a decision compares: the selected cells only, and only stored results this checkout would still give.

`gate` and `diff` used to compare every cell the two result sets hold. `scope_for` names the cells the
checkout's selection (`-k`, `--cases`) holds and how to compute the reuse key each would get now;
`scoped` keeps, on both sides, the selected cells whose stored key is still that key. A stored cell whose
key differs (its case, the shared probe code or the suite changed since it ran) is left out and named; a
cell without a key, or of a run that recorded no environment digest, cannot be checked and is kept.

A stored cell the checkout no longer declares is left out of both sides and listed apart as "no longer in the
suite", never judged as a cell the candidate did not run: a cell of a declared case whose parameter is gone (or that
became parameterised), and a keyed cell (one stored by a run that computed reuse keys) of a case removed from a module
the checkout has (the suite's, or a `--cases` folder given). A cell of a module the checkout does not know (another
checkout's, or a folder not given), or a removed case's cell without a key, cannot be told apart and is compared as
before.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

from conformance.core.case import Case
from conformance.decide.diff import ResultSet
from conformance.engine.keys import cell_key
from conformance.engine.selection import all_cells
from conformance.results.merge import MergedRun
from conformance.results.schema import CellResult, RunHeader

# (cell, the header of the file it came from) -> the key this checkout gives it; None when it cannot tell.
KeyOf = Callable[[CellResult, RunHeader], "str | None"]


@dataclass(frozen=True)
class Scope:
    """The selected cell ids (None: every cell) and how to compute a stored cell's current key."""

    selected: frozenset[str] | None
    key_of: KeyOf
    declared: frozenset[str] = frozenset()  # every cell id the checkout declares
    cases: frozenset[str] = frozenset()  # every case id it declares
    modules: frozenset[str] = frozenset()  # the modules those cases come from (`numerics`, `team/checks`)

    def retired(self, cell: CellResult) -> bool:
        """Whether the stored `cell` is one the checkout no longer declares (see the module's docstring)."""
        if cell.cell_id in self.declared:
            return False
        return cell.case in self.cases or (bool(cell.key) and cell.case.rpartition(".")[0] in self.modules)


def scope_for(declared: Sequence[Case], selected_ids: Sequence[str] | None, folder_hashes: dict[str, str]) -> Scope:
    """The scope of a decision: `selected_ids` (None when nothing was selected), keys from the `declared` cases
    and each case folder's digest (`folder_hashes`, package -> digest), as `engine.matrix.stored_cells` uses."""
    cases = {case.id: case for case in declared}
    cell_ids = frozenset(cell.id for cell in all_cells(declared))

    def key_of(cell: CellResult, header: RunHeader) -> str | None:
        case = cases.get(cell.case)
        if case is None or not header.environment_digest or not cell.key:
            return None
        try:
            return cell_key(case, cell.param, header.environment_digest + folder_hashes.get(case.package, ""))
        except (KeyError, ValueError):  # a parameter the case no longer declares
            return "retired"

    return Scope(
        None if selected_ids is None else frozenset(selected_ids),
        key_of,
        cell_ids,
        frozenset(cases),
        frozenset(case.id.rpartition(".")[0] for case in declared),
    )


def scoped(result: ResultSet, scope: Scope) -> tuple[ResultSet, list[str], list[str]]:
    """`result` with only the selected cells whose stored key is the current one, the stale cells left out, and the
    cells left out because the checkout no longer declares them (each `platform jax VERSION CELL`)."""
    stale: list[str] = []
    retired: list[str] = []
    runs: dict[str, MergedRun] = {}
    for platform, run in result.runs.items():
        header_of = {id(cell): f.header for f in run.files for cell in f.cells}
        kept: dict[str, CellResult] = {}
        for cell_id, cell in run.cells.items():
            if scope.selected is not None and cell_id not in scope.selected:
                continue
            if scope.retired(cell):
                retired.append(f"{platform} jax {run.jax} {cell_id}")
                continue
            header = header_of.get(id(cell))
            current = scope.key_of(cell, header) if header is not None else None
            if current is not None and current != cell.key:
                stale.append(f"{platform} jax {run.jax} {cell_id}")
                continue
            kept[cell_id] = cell
        conflicts = [c for c in run.conflicts if c.cell_id in kept]
        runs[platform] = replace(run, cells=kept, conflicts=conflicts)
    return replace(result, runs=runs, conflicts=[c for r in runs.values() for c in r.conflicts]), stale, retired


def stale_note(label: str, stale: list[str]) -> str:
    """One line naming the stale cells left out of a side (at most five by name)."""
    named = "; ".join(stale[:5]) + (f"; and {len(stale) - 5} more" if len(stale) > 5 else "")
    return (
        f"note: left out {len(stale)} stale cell(s) of the {label} (stored by an older case, probe or suite; "
        f"its key no longer matches this checkout; run them again to compare them): {named}"
    )


def decision_scope(folders: Sequence, expression: str | None) -> Scope:
    """The scope of `gate`/`diff` for the case folders given (`--cases`) and the `-k` expression: the cells `-k`
    selects (a `ConformanceError` when it selects none), every cell without one."""
    from conformance.engine.matrix import select_run

    selection = select_run(folders, expression)
    selected = [cell.id for cell in selection.selected] if expression else None
    return scope_for(selection.declared, selected, {f.name: f.digest() for f in folders})


@dataclass(frozen=True)
class ScopedPair:
    """Both sides scoped, a note for each side that had stale cells left out, and the cells of either side the
    checkout no longer declares (`platform jax VERSION CELL (the baseline's|the candidate's)`)."""

    baseline: ResultSet
    candidate: ResultSet
    notes: list[str]
    retired: list[str]


def scoped_pair(baseline: ResultSet, candidate: ResultSet, scope: Scope) -> ScopedPair:
    """Both sides scoped (`scoped`), with a note for each side that had stale cells left out and the cells no longer
    in the suite."""
    notes: list[str] = []
    retired: list[str] = []
    sides = []
    for side in (baseline, candidate):
        kept, stale, gone = scoped(side, scope)
        sides.append(kept)
        retired.extend(f"{line} (the {side.label}'s)" for line in gone)
        if stale:
            notes.append(stale_note(side.label, stale))
    return ScopedPair(sides[0], sides[1], notes, retired)


def retired_note(retired: list[str]) -> str:
    """One line naming the cells left out because the checkout no longer declares them (at most five by name)."""
    named = "; ".join(retired[:5]) + (f"; and {len(retired) - 5} more" if len(retired) > 5 else "")
    return f"note: left out {len(retired)} cell(s) no longer in the suite (not compared): {named}"

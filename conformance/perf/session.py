"""A perf session: workloads sampled on every side in interleaved rounds, decided, stored.

Round 0 runs the sides in order (A B C), round 1 in reverse (C B A), and so on, one fresh child process
(`perf.child`) per side and round, each workload in a process of its own under its `timeout_s`, so a busy minute of
a shared machine falls on every side. A workload that times out, crashes or fails gets that status of its own (and
is not asked again in the session on that side); the other workloads' samples of the round are kept. Only the
workloads asked are taken from a sampler's answer, and only samples whose numbers pass `perf.numbers`. After the
asked rounds, every workload whose timed verdict against its neighbour is `unknown` gets more rounds (on those two
sides only), up to `max_rounds`. A side's samples are reused from its result file where their key still holds
(`perf.store`), and stored there after every round (an interrupted session keeps what it sampled; a later one
reuses a workload's samples only when there are as many as it asks rounds). An A/A session compares each side with
a twin of itself (the same environment, sampled apart, never stored): the noise check, which must flag nothing.
"""

from __future__ import annotations

import os
import statistics
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.core.workload import Workload
from conformance.engine.runner import child_environment
from conformance.errors import ConformanceError, one_line
from conformance.perf import stats
from conformance.perf.child import START_BOUND_S as CHILD_START_S
from conformance.perf.child import host_facts
from conformance.perf.childrun import ChildCommand, measure_workloads
from conformance.perf.numbers import STATUSES, number_problem, sample_problem
from conformance.perf.store import measured_source, reusable, store_perf, stored_perf, workload_key
from conformance.tempfolders import owned_temporary_folder, remove_orphaned_folders

Say = Callable[[str], None]
PERF_FOLDER_PREFIX = "jaxconf-perf-"
DEFAULT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Side:
    """One side of a session: its label (a release, or a build's own), its interpreter, where its samples are
    stored (`folder`; None: never), its JAX version and platform, and what identifies its environment."""

    label: str
    python: str
    version: str
    platform: str
    environment: str
    folder: Path | None = None
    header: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PerfRequest:
    """What a session measures and how: the sides in order, the workloads, the comparisons (pairs of side indexes,
    old first; consecutive sides when empty), the rounds and their bound, the threshold, XLA_FLAGS, and reuse."""

    sides: tuple[Side, ...]
    workloads: tuple[Workload, ...]
    package: str
    case_folders: tuple[str, ...] = ()
    pairs: tuple[tuple[int, int], ...] = ()
    rounds: int = 5
    max_rounds: int = 9
    threshold: float = stats.THRESHOLD
    xla_flags: str = ""
    rerun: bool = False
    min_time: float = 0.1

    def comparisons(self) -> tuple[tuple[int, int], ...]:
        """The pairs compared: as given, else each side against the one before it."""
        return self.pairs or tuple((i - 1, i) for i in range(1, len(self.sides)))


Sampler = Callable[[Side, Sequence[str], int], dict[str, Any]]


def child_sampler(request: PerfRequest, session: str) -> Sampler:
    """Samples by a fresh `perf.child` per side and round, in the side's interpreter, each workload bounded by its
    `timeout_s` in a process of its own (`perf.childrun`); ConformanceError when the child cannot start."""
    bounds = {w.id: float(w.timeout_s) for w in request.workloads}

    def sample(side: Side, workload_ids: Sequence[str], round_no: int) -> dict[str, Any]:
        extra = {"JAX_PLATFORMS": "cpu", "JAX_ENABLE_COMPILATION_CACHE": "false"}
        if request.xla_flags:
            extra["XLA_FLAGS"] = request.xla_flags
        with owned_temporary_folder(PERF_FOLDER_PREFIX) as workdir:
            command = ChildCommand(
                [
                    side.python,
                    "-m",
                    "conformance.perf.child",
                    "--package",
                    request.package,
                    "--min-time",
                    str(request.min_time),
                ],
                child_environment(os.environ, extra, case_folders=request.case_folders),
                str(workdir),
            )
            found = measure_workloads(
                command, side.label, [(w, bounds.get(w, DEFAULT_TIMEOUT_S)) for w in workload_ids], CHILD_START_S
            )
        return {
            wid: ({**record, "round": round_no, "session": session} if "metrics" in record else record)
            for wid, record in found.items()
        }

    return sample


@dataclass
class PerfOutcome:
    """Every side's samples per workload, the verdicts of each comparison, the noise bands, and what was stored."""

    request: PerfRequest
    samples: dict[tuple[str, int], list[dict[str, Any]]]
    errors: dict[tuple[str, int], str]
    reused: dict[tuple[str, int], bool]
    rounds_run: int
    stored: list[Path] = field(default_factory=list)
    # the status of each (workload, side) in `errors`: `timeout`, `crash` or `error` (`perf.numbers.STATUSES`)
    statuses: dict[tuple[str, int], str] = field(default_factory=dict)

    def values(self, workload_id: str, side: int, metric: str) -> list[float]:
        """The sampled values of one metric of a workload on a side."""
        return [
            float(s["metrics"][metric])
            for s in self.samples.get((workload_id, side), [])
            if isinstance(s.get("metrics", {}).get(metric), (int, float))
        ]

    def band(self, workload_id: str, metric: str) -> float:
        """The noise band of a timed metric of a workload: the widest within-side spread (`stats.noise_band`)."""
        return stats.noise_band({str(i): self.values(workload_id, i, metric) for i in range(len(self.request.sides))})

    def verdicts(self, workload_id: str, old: int, new: int) -> dict[str, stats.Verdict]:
        """Each metric's verdict of side `new` against side `old` (metrics a side lacks are left out)."""
        found: dict[str, stats.Verdict] = {}
        for metric in stats.METRICS:
            before, after = self.values(workload_id, old, metric), self.values(workload_id, new, metric)
            verdict = (
                stats.exact_verdict(before, after)
                if metric in stats.EXACT_METRICS
                else stats.timed_verdict(before, after, self.request.threshold, self.band(workload_id, metric))
            )
            if verdict is not None:
                found[metric] = verdict
        return found

    def flagged(self) -> list[tuple[str, int, int, str, stats.Verdict]]:
        """Every verdict other than `same`: (workload, old side, new side, metric, verdict)."""
        return [
            (w.id, old, new, metric, verdict)
            for w in self.request.workloads
            for old, new in self.request.comparisons()
            for metric, verdict in self.verdicts(w.id, old, new).items()
            if verdict.verdict != "same"
        ]


def _order(count: int, round_no: int) -> list[int]:
    """A B C on even rounds, C B A on odd ones."""
    forward = list(range(count))
    return forward if round_no % 2 == 0 else forward[::-1]


def _reuse(request: PerfRequest, outcome: PerfOutcome, host: dict[str, Any]) -> None:
    """Stored samples of every (workload, side) whose key still holds and that has enough of them."""
    for index, side in enumerate(request.sides):
        stored = stored_perf(side.folder, side.version, side.platform) if side.folder and not request.rerun else {}
        for workload in request.workloads:
            key = workload_key(measured_source(workload), side.environment, request.xla_flags, host)
            found = reusable(stored.get(workload.id), key)
            if len(found) >= request.rounds:
                outcome.samples[(workload.id, index)] = found
                outcome.reused[(workload.id, index)] = True


def _sample_round(
    request: PerfRequest, outcome: PerfOutcome, sampler: Sampler, round_no: int, wanted: dict[int, list[str]], say: Say
) -> None:
    """One round: each side that still wants samples, in this round's order."""
    for index in _order(len(request.sides), round_no):
        ids = [wid for wid in wanted.get(index) or [] if (wid, index) not in outcome.errors]
        if not ids:
            continue
        side = request.sides[index]
        say(f"round {round_no + 1}: jax {side.label} ({len(ids)} workloads)")
        answered = sampler(side, ids, round_no)
        for wid in ids:  # only what was asked: an answer for another workload is not taken
            found = answered.get(wid)
            problem = sample_problem(found) if isinstance(found, dict) and "metrics" in found else ""
            if isinstance(found, dict) and "metrics" in found and not problem:
                outcome.samples.setdefault((wid, index), []).append(found)
                continue
            status = found.get("status") if isinstance(found, dict) and found.get("status") in STATUSES else "error"
            why = problem or (str(found.get("error") or "no metrics") if isinstance(found, dict) else "no answer")
            outcome.errors[(wid, index)] = why if status == "error" else f"{status}: {why}"
            outcome.statuses[(wid, index)] = status
            say(
                one_line(
                    f"round {round_no + 1}: jax {side.label}: {wid} {status}: {why}; "
                    f"the other workloads' samples of the round are kept"
                )
            )


def _unknown_sides(request: PerfRequest, outcome: PerfOutcome) -> dict[int, list[str]]:
    """The sides and workloads of every comparison with a timed verdict `unknown` (not reused, not failed)."""
    wanted: dict[int, set[str]] = {}
    for workload in request.workloads:
        for old, new in request.comparisons():
            verdicts = outcome.verdicts(workload.id, old, new)
            if any(v.verdict == "unknown" for m, v in verdicts.items() if m in stats.TIMED_METRICS):
                for index in (old, new):
                    if not outcome.reused.get((workload.id, index)) and (workload.id, index) not in outcome.errors:
                        wanted.setdefault(index, set()).add(workload.id)
    return {i: sorted(ids) for i, ids in wanted.items()}


def run_perf(request: PerfRequest, sampler: Sampler | None = None, say: Say = lambda line: None) -> PerfOutcome:
    """Sample, decide, extend what is unknown, and store (see the module docstring)."""
    if request.rounds < 1 or request.max_rounds < request.rounds:
        raise ConformanceError("--rounds must be at least 1 and at most --max-rounds")
    if number_problem(request.threshold) or request.threshold <= 1:  # NaN and infinity too
        raise ConformanceError(f"--threshold must be a finite ratio above 1 (such as 1.25), not {request.threshold!r}")
    if number_problem(request.min_time):
        raise ConformanceError(f"the least time of a workload's steady calls is {number_problem(request.min_time)}")
    session = uuid.uuid4().hex[:12]
    if sampler is None:
        remove_orphaned_folders()  # those of a perf command killed with SIGKILL
        sampler = child_sampler(request, session)
    host = host_facts()
    outcome = PerfOutcome(request, {}, {}, {}, 0)
    _reuse(request, outcome, host)
    fresh = {
        i: [w.id for w in request.workloads if not outcome.reused.get((w.id, i))] for i in range(len(request.sides))
    }
    for round_no in range(request.rounds):
        _sample_round(request, outcome, sampler, round_no, fresh, say)
        _store(request, outcome, host)  # after every round: an interrupted session keeps what it sampled
    outcome.rounds_run = request.rounds if any(fresh.values()) else 0
    while outcome.rounds_run < request.max_rounds:
        wanted = _unknown_sides(request, outcome)
        if not wanted:
            break
        _sample_round(request, outcome, sampler, outcome.rounds_run, wanted, say)
        outcome.rounds_run += 1
        _store(request, outcome, host)
    return outcome


def _store(request: PerfRequest, outcome: PerfOutcome, host: dict[str, Any]) -> None:
    """Write each stored side's fresh samples (and failures) into its result file; `outcome.stored` names each file
    once."""
    for index, side in enumerate(request.sides):
        if side.folder is None:
            continue
        entries = {}
        for workload in request.workloads:
            if outcome.reused.get((workload.id, index)):
                continue
            key = workload_key(measured_source(workload), side.environment, request.xla_flags, host)
            error = outcome.errors.get((workload.id, index), "")
            status = outcome.statuses.get((workload.id, index), "error")
            entries[workload.id] = {
                "key": key,
                "claim": workload.claim,
                "samples": outcome.samples.get((workload.id, index), []),
                **({"error": error, "status": status} if error else {}),
            }
        written = store_perf(side.folder, side.version, side.platform, entries, side.header) if entries else None
        if written is not None and written not in outcome.stored:
            outcome.stored.append(written)


def medians(outcome: PerfOutcome, workload_id: str, side: int) -> dict[str, float]:
    """The median of every metric a side has for a workload."""
    found = {}
    for metric in stats.METRICS:
        values = outcome.values(workload_id, side, metric)
        if values:
            found[metric] = statistics.median(values)
    return found

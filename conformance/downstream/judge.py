"""A baseline and a candidate run of one downstream suite, judged as crater and PkgEval judge. Pure.

Each node id falls in one class:

- `regressed`: passed (or xfail) on the baseline, failing on the candidate (failed, error, collection error, or
  the crash of the test pytest was running): it gates unless an acknowledgement names its signature or node id;
- `uninstallable`: the suite's lock cannot be installed with the candidate: every baseline test, under one cause
  (the resolver's reason); it gates like a regression;
- `spurious`: passed on the baseline, a timeout or a test a dead pytest never reached on the candidate (crater's
  spurious results: never counted as regressions, listed);
- `flaky`: failed on the candidate and passed when rerun once, or a node the manifest knows as flaky: never gates;
- `fixed`: failing on the baseline, passed on the candidate;
- `broken_same` / `broken_changed`: failing on both, with the same signature or with another;
- `appeared` / `vanished`: a node id on one side only (tests of a module that stopped collecting are not listed
  as vanished: the module's collection error is the regression).

Regressions are grouped by signature: one line per cause with a count and three examples.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from conformance.downstream.outcomes import FAILING, UNINSTALLABLE_ID

PASSING = frozenset({"passed", "xfail"})
EXAMPLES = 3


@dataclass(frozen=True)
class Judged:
    """One node id's result as the judge reads it: its status, signature text ('' unless failing), the library
    the signature is filed under, whether the test was reached, and its new deprecation warnings' texts."""

    status: str
    signature: str = ""
    owner: str = ""
    reached: bool = True
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Ack:
    """An acknowledgement (`[[downstream]]` entry): a suite pattern, and a signature or node-id pattern (fnmatch)."""

    suite: str
    signature: str = ""
    node: str = ""
    reason: str = ""
    line: int = 0

    def covers(self, suite: str, node: str, signature: str) -> bool:
        """Whether it acknowledges `node` of `suite` failing with `signature`."""
        if not fnmatch.fnmatchcase(suite, self.suite):
            return False
        if self.signature and not fnmatch.fnmatchcase(signature, self.signature):
            return False
        return not self.node or fnmatch.fnmatchcase(node, self.node)


@dataclass(frozen=True)
class Change:
    """One node id's class, with both statuses and the candidate's signature (the baseline's for `fixed`)."""

    node: str
    kind: str
    before: str
    after: str
    signature: str = ""
    owner: str = ""
    acknowledged: str = ""  # the acknowledging entry's reason


@dataclass(frozen=True)
class Cause:
    """One signature's regressions: the signature, its library, the node ids (sorted)."""

    signature: str
    owner: str
    nodes: tuple[str, ...]

    def line(self) -> str:
        """`13 tests  AttributeError: ... @ frame  (chex)  e.g. a, b, c`."""
        shown = ", ".join(self.nodes[:EXAMPLES]) + (", ..." if len(self.nodes) > EXAMPLES else "")
        who = f" (in {self.owner})" if self.owner else ""
        return f"{len(self.nodes)} test{'s' if len(self.nodes) != 1 else ''}: {self.signature}{who}; e.g. {shown}"


@dataclass
class Judgement:
    """Every change of one suite between two releases, and the early signal (new deprecation warnings)."""

    suite: str
    changes: list[Change] = field(default_factory=list)
    new_warnings: list[str] = field(default_factory=list)
    compared: int = 0  # the node ids judged (both sides' together; every baseline test when uninstallable)

    def of(self, kind: str) -> list[Change]:
        """The changes of one class."""
        return [c for c in self.changes if c.kind == kind]

    @property
    def gating(self) -> list[Change]:
        """The regressions (and an uninstallable candidate) no acknowledgement covers: these fail the gate."""
        return [c for c in self.changes if c.kind in ("regressed", "uninstallable") and not c.acknowledged]

    def causes(self, kind: str = "regressed", acknowledged: bool = False) -> list[Cause]:
        """The changes of `kind`, grouped by signature, most tests first."""
        groups: dict[tuple[str, str], list[str]] = {}
        for change in self.of(kind):
            if bool(change.acknowledged) == acknowledged:
                groups.setdefault((change.signature, change.owner), []).append(change.node)
        causes = [Cause(sig, owner, tuple(sorted(nodes))) for (sig, owner), nodes in groups.items()]
        return sorted(causes, key=lambda c: (-len(c.nodes), c.signature))

    def counts(self) -> dict[str, int]:
        """How many node ids fell in each class."""
        found: dict[str, int] = {}
        for change in self.changes:
            found[change.kind] = found.get(change.kind, 0) + 1
        return found


def _module(node: str) -> str:
    return node.split("::", 1)[0]


def _kind(before: Judged, after: Judged, known_flaky: bool) -> str | None:
    if after.status == "flaky" or (known_flaky and after.status in FAILING):
        return "flaky"
    if before.status in PASSING and after.status in FAILING:
        if after.status == "timeout" or (after.status == "crash" and not after.reached):
            return "spurious"
        return "regressed"
    if before.status in FAILING and after.status in PASSING:
        return "fixed"
    if before.status in FAILING and after.status in FAILING:
        return "broken_same" if before.signature == after.signature else "broken_changed"
    return None


def judge(
    suite: str,
    baseline: Mapping[str, Judged],
    candidate: Mapping[str, Judged],
    acks: Sequence[Ack] = (),
    known_flaky: Sequence[str] = (),
) -> Judgement:
    """The judgement of `candidate` against `baseline` (node id → `Judged` each); `known_flaky`: node-id patterns
    the manifest lists as flaky; `acks`: acknowledgements of regressions."""
    out = Judgement(suite)

    def ack_of(node: str, signature: str) -> str:
        for ack in acks:
            if ack.covers(suite, node, signature):
                return ack.reason or f"acknowledged (line {ack.line})"
        return ""

    if UNINSTALLABLE_ID in candidate and UNINSTALLABLE_ID not in baseline:
        why = candidate[UNINSTALLABLE_ID]
        out.compared = sum(1 for n in baseline if n != UNINSTALLABLE_ID)
        for node in sorted(n for n in baseline if n != UNINSTALLABLE_ID):
            out.changes.append(
                Change(
                    node,
                    "uninstallable",
                    baseline[node].status,
                    "uninstallable",
                    why.signature,
                    "",
                    ack_of(node, why.signature),
                )
            )
        return out
    broken_modules = {
        n
        for n, j in candidate.items()
        if j.status == "collection_error" and not (n in baseline and baseline[n].status == "collection_error")
    }
    out.compared = len(set(baseline) | set(candidate))
    for node in sorted(set(baseline) | set(candidate)):
        before, after = baseline.get(node), candidate.get(node)
        if before is None and after is not None:
            if after.status == "collection_error" and node in broken_modules:
                out.changes.append(
                    Change(
                        node,
                        "regressed",
                        "collected",
                        after.status,
                        after.signature,
                        after.owner,
                        ack_of(node, after.signature),
                    )
                )
            else:
                out.changes.append(Change(node, "appeared", "", after.status, after.signature, after.owner))
            continue
        if after is None:
            if _module(node) not in broken_modules:
                out.changes.append(Change(node, "vanished", before.status, "", before.signature, before.owner))
            continue
        flaky = any(fnmatch.fnmatchcase(node, p) for p in known_flaky)
        kind = _kind(before, after, flaky)
        if kind is None:
            continue
        signature, owner = (before.signature, before.owner) if kind == "fixed" else (after.signature, after.owner)
        acked = ack_of(node, signature) if kind == "regressed" else ""
        out.changes.append(Change(node, kind, before.status, after.status, signature, owner, acked))
    seen = {w for j in baseline.values() for w in j.warnings}
    out.new_warnings = sorted({w for j in candidate.values() for w in j.warnings if w not in seen})
    return out

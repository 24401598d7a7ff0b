"""`--budget SECONDS`: the subset of a suite that fits, planned from recorded durations. Pure.

From the seconds each node id took when last recorded: first one parametrisation per test function (its fastest),
then the others, each pass fastest first, until the next test would pass the budget; the slow tail is left out.
Tests with no recorded duration are kept when the budget has room after the recorded ones (they are counted at the
median recorded time). What was left out is said: how many tests, how many seconds, and the slowest of them.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Mapping, Sequence

from conformance.downstream.outcomes import UNINSTALLABLE_ID


@dataclass(frozen=True)
class Budgeted:
    """The node ids kept, those left out, and the seconds each part was recorded at."""

    kept: tuple[str, ...]
    left_out: tuple[str, ...]
    kept_s: float
    left_out_s: float

    def line(self, budget_s: float) -> str:
        """What the budget kept and what it left out."""
        if not self.left_out:
            return f"budget {budget_s:g} s: every test fits ({len(self.kept)} tests, {self.kept_s:.1f} s recorded)"
        return (
            f"budget {budget_s:g} s: kept {len(self.kept)} tests ({self.kept_s:.1f} s recorded), left out "
            f"{len(self.left_out)} ({self.left_out_s:.1f} s), the slowest "
            f"{', '.join(self.left_out[:3])}"
        )


def function_of(node: str) -> str:
    """The test function a node id parametrises (`a.py::T::test_x[1-2]` → `a.py::T::test_x`)."""
    return node.split("[", 1)[0]


def plan_budget(
    nodes: Sequence[str], recorded: Mapping[str, float], budget_s: float, multiplier: float = 1.0
) -> Budgeted:
    """The node ids of `nodes` to run within `budget_s` seconds, from `recorded` durations times `multiplier`."""
    nodes = [n for n in dict.fromkeys(nodes) if n != UNINSTALLABLE_ID and "::" in n]
    known = [recorded[n] * multiplier for n in nodes if n in recorded]
    typical = statistics.median(known) if known else 0.0
    cost = {n: recorded[n] * multiplier if n in recorded else typical for n in nodes}
    firsts: dict[str, str] = {}
    for node in sorted(nodes, key=lambda n: (cost[n], n)):
        firsts.setdefault(function_of(node), node)
    first_pass = sorted(firsts.values(), key=lambda n: (n not in recorded, cost[n], n))
    chosen = set(first_pass)
    second_pass = sorted((n for n in nodes if n not in chosen), key=lambda n: (n not in recorded, cost[n], n))
    kept, spent, full = [], 0.0, False
    for node in [*first_pass, *second_pass]:
        if not full and spent + cost[node] <= budget_s:
            kept.append(node)
            spent += cost[node]
        else:
            full = True  # the slow tail: nothing after the first test that does not fit
    left = sorted((n for n in nodes if n not in set(kept)), key=lambda n: (-cost[n], n))
    return Budgeted(tuple(sorted(kept)), tuple(left), spent, sum(cost[n] for n in left))

"""The verdict rules of the performance tier. Pure: numbers in, verdicts out.

- An exact metric (`EXACT_METRICS`: one value per release, the same in every sample) that differs between two
  releases is `changed`, with the ratio new/old; equal, it is `same`.
- A timed metric (`TIMED_METRICS`) is compared with a two-sided Mann–Whitney U test on the samples of the two
  releases (the exact permutation distribution of the mid-ranks for up to 20 samples in all, the normal
  approximation with the tie correction beyond) and the ratio of the medians, new/old. It is `regressed` when
  p < `ALPHA` and the ratio is at least the threshold (default `THRESHOLD`, ×1.25, or the workload's noise band
  where that is wider), `improved` when p < `ALPHA` and the ratio is at most its inverse, `unknown` when the ratio
  passes the threshold but the test cannot tell, the noise band is wider than the ratio, or either side has fewer
  than `MIN_SAMPLES`, and `same` otherwise (the ratio within the threshold): the session then runs more rounds for
  what is `unknown`, up to its bound.
- The noise band of a workload's metric is 1 + 3·(IQR/median) of its samples within one release, the widest over
  the releases measured (rustc-perf's fence, read as a ratio).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from itertools import combinations
from typing import Iterable, Mapping, Sequence

EXACT_METRICS = ("compiles", "temp_bytes", "code_bytes", "argument_bytes", "output_bytes", "fusions", "instructions")
TIMED_METRICS = ("compile_s", "run_s", "run_cpu_s")
METRICS = EXACT_METRICS + TIMED_METRICS
VERDICTS = ("changed", "regressed", "improved", "same", "unknown")
ALPHA = 0.01
THRESHOLD = 1.25
MIN_SAMPLES = 5
EXACT_LIMIT = 20  # samples in all, below which the exact distribution of U is enumerated


@dataclass(frozen=True)
class Verdict:
    """One metric of one workload, a release against the one before: the verdict, the ratio new/old (None where the
    old value is 0 and the new is not), the rank test's p (None for exact metrics) and the band used."""

    verdict: str
    ratio: float | None
    p: float | None = None
    band: float = 1.0

    def to_json(self) -> dict[str, object]:
        """Plain-JSON form."""
        return {
            "verdict": self.verdict,
            "ratio": _rounded(self.ratio),
            "p": _rounded(self.p),
            "band": _rounded(self.band),
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.6g}")


def _ranks(values: Sequence[float]) -> list[float]:
    """Mid-ranks (1-based) of `values`, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def mann_whitney(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """`(U of a, two-sided p)` of the Mann–Whitney U test; p is 1.0 when either side is empty."""
    n, m = len(a), len(b)
    if not n or not m:
        return 0.0, 1.0
    ranks = _ranks(list(a) + list(b))
    u = sum(ranks[:n]) - n * (n + 1) / 2
    if n + m <= EXACT_LIMIT:
        return u, _exact_p(u, n, ranks)
    return u, _normal_p(u, n, m, list(a) + list(b))


def _exact_p(u: float, n: int, ranks: Sequence[float]) -> float:
    """Two-sided p of U from its exact permutation distribution (every split of the pooled mid-ranks into the two
    sides equally likely, so ties are exact too)."""
    m = len(ranks) - n
    mean = n * m / 2
    distance = abs(u - mean)
    extreme = count = 0
    for chosen in combinations(ranks, n):
        count += 1
        if abs(sum(chosen) - n * (n + 1) / 2 - mean) >= distance - 1e-9:
            extreme += 1
    return min(1.0, extreme / count)


def _normal_p(u: float, n: int, m: int, pooled: Sequence[float]) -> float:
    """Two-sided p of U by the normal approximation, with the tie correction and a continuity correction."""
    total = n + m
    ties = sum(c**3 - c for c in _tie_counts(pooled))
    variance = n * m / 12 * ((total + 1) - ties / (total * (total - 1)))
    if variance <= 0:
        return 1.0
    z = (abs(u - n * m / 2) - 0.5) / math.sqrt(variance)
    return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))


def _tie_counts(values: Iterable[float]) -> list[int]:
    counts: dict[float, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return [c for c in counts.values() if c > 1]


def ratio_of(old: float, new: float) -> float | None:
    """new/old; 1.0 when both are 0, None when only the old one is."""
    if old == 0:
        return 1.0 if new == 0 else None
    return new / old


def exact_verdict(old: Sequence[float], new: Sequence[float]) -> Verdict | None:
    """`changed` or `same` for an exact metric (the median of each side's values); None when a side lacks it."""
    if not old or not new:
        return None
    before, after = statistics.median(old), statistics.median(new)
    return Verdict("same" if before == after else "changed", ratio_of(before, after))


def timed_verdict(
    old: Sequence[float],
    new: Sequence[float],
    threshold: float = THRESHOLD,
    band: float = 1.0,
    alpha: float = ALPHA,
    min_samples: int = MIN_SAMPLES,
) -> Verdict | None:
    """`regressed`, `improved`, `same` or `unknown` for a timed metric (see the module docstring)."""
    if not old or not new:
        return None
    fence = max(threshold, band)
    ratio = ratio_of(statistics.median(old), statistics.median(new))
    _, p = mann_whitney(new, old)
    past_fence = ratio is None or ratio >= fence or ratio <= 1 / fence
    past_threshold = ratio is None or ratio >= threshold or ratio <= 1 / threshold
    decided = min(len(old), len(new)) >= min_samples and p < alpha and past_fence
    if decided:
        return Verdict("regressed" if ratio is None or ratio > 1 else "improved", ratio, p, fence)
    return Verdict("unknown" if past_threshold else "same", ratio, p, fence)


def noise_band(samples_by_release: Mapping[str, Sequence[float]]) -> float:
    """1 + 3·IQR/median of the samples within each release, the widest over the releases (1.0 with too few)."""
    widest = 0.0
    for values in samples_by_release.values():
        if len(values) < 4:
            continue
        q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
        middle = statistics.median(values)
        if middle > 0:
            widest = max(widest, (q3 - q1) / middle)
    return 1.0 + 3.0 * widest

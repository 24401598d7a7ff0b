"""The verdict rules of the performance tier (`perf.stats`): pure, no JAX."""

from __future__ import annotations

import pytest

from conformance.perf.stats import exact_verdict, mann_whitney, noise_band, ratio_of, timed_verdict
from conformance.perf.decisions import upward


def test_exact_p_of_two_separated_samples_of_five_is_two_of_252():
    u, p = mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert u == 0 and p == pytest.approx(2 / 252)
    assert mann_whitney([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]) == (25, pytest.approx(2 / 252))


def test_interleaved_samples_are_not_different():
    assert mann_whitney([1, 3, 5, 7, 9], [2, 4, 6, 8, 10])[1] > 0.5


def test_ties_are_exact_for_small_samples_and_identical_samples_give_p_one():
    assert mann_whitney([1.0] * 6, [1.0] * 6)[1] == 1.0
    _, p = mann_whitney([1.0, 1.01, 0.99, 0.98, 1.01], [2.04, 1.96, 2.0, 2.04, 1.98])
    assert p == pytest.approx(2 / 252)  # separated with ties: still the most extreme split of 252
    _, p = mann_whitney([1, 1, 2, 2, 3, 3, 4, 4, 1, 2, 3], [5, 5, 6, 6, 7, 7, 8, 8, 5, 6, 7])
    assert 0.00001 < p < 0.001  # 22 samples: the normal approximation with the tie correction


def test_a_large_separated_sample_uses_the_normal_approximation():
    _, p = mann_whitney(list(range(15)), list(range(100, 115)))
    assert p < 1e-5


def test_regressed_needs_both_the_rank_test_and_the_ratio():
    old = [1.0, 1.01, 0.99, 1.02, 0.98]
    assert timed_verdict(old, [x * 1.5 for x in old]).verdict == "regressed"
    assert timed_verdict(old, [x * 1.1 for x in old]).verdict == "same"  # significant, but under x1.25
    assert timed_verdict(old, [x * 0.5 for x in old]).verdict == "improved"
    assert timed_verdict(old, [x * 1.1 for x in old], threshold=1.05).verdict == "regressed"


def test_a_big_ratio_the_samples_cannot_confirm_is_unknown():
    old = [1.0, 3.0, 1.0, 3.0, 1.0]
    new = [2.9, 1.0, 3.1, 2.8, 3.2]
    verdict = timed_verdict(old, new)
    assert verdict.verdict == "unknown" and verdict.ratio == pytest.approx(2.9)
    assert timed_verdict([1.0, 1.0], [2.0, 2.0]).verdict == "unknown"  # too few samples to decide
    assert timed_verdict([1.0, 1.0], [1.01, 1.0]).verdict == "same"


def test_a_noise_band_wider_than_the_threshold_raises_the_fence():
    old = [1.0, 1.01, 0.99, 1.02, 0.98]
    new = [x * 1.5 for x in old]
    assert timed_verdict(old, new, band=2.0).verdict == "unknown"  # past x1.25, but inside a x2 band
    assert timed_verdict(old, new, band=2.0).band == 2.0


def test_exact_metrics_are_changed_with_their_ratio_or_same():
    assert exact_verdict([10, 10], [15]).to_json() == {"verdict": "changed", "ratio": 1.5, "p": None, "band": 1.0}
    assert exact_verdict([7], [7, 7]).verdict == "same"
    assert exact_verdict([], [3]) is None
    assert exact_verdict([0], [4]).ratio is None and ratio_of(0, 0) == 1.0


def test_upward_is_a_regression_or_an_exact_metric_that_grew():
    assert upward(exact_verdict([1], [2])) and not upward(exact_verdict([2], [1]))
    old = [1.0, 1.01, 0.99, 1.02, 0.98]
    assert upward(timed_verdict(old, [x * 2 for x in old])) and not upward(timed_verdict(old, old))


def test_noise_band_is_one_plus_three_iqr_over_median_at_the_widest_release():
    assert noise_band({"a": [1.0, 1.0, 1.0, 1.0], "b": [1.0, 2.0]}) == 1.0
    band = noise_band({"a": [1.0, 1.0, 1.0, 1.0], "b": [0.9, 1.0, 1.0, 1.1, 1.2]})
    assert band == pytest.approx(1 + 3 * 0.1)


# The values below are scipy.stats.mannwhitneyu's (1.17.1) for the same samples: `method="exact"` up to 20 samples in
# all, `method="asymptotic"` (tie and continuity corrections) beyond. scipy is not a dependency: they are written out.
def test_twenty_samples_in_all_still_take_the_exact_distribution():
    u, p = mann_whitney(list(range(10)), list(range(100, 110)))
    assert u == 0 and p == pytest.approx(2 / 184756, rel=1e-12)  # scipy exact: 1.082508822446903e-05


def test_the_normal_approximation_matches_scipy_with_ties_and_its_continuity_correction():
    u, p = mann_whitney([1, 2, 2, 3, 3, 3, 4, 5, 5, 6, 7, 8], [2, 3, 4, 5, 5, 6, 7, 8, 9, 9, 9, 10])
    assert u == 35.5 and p == pytest.approx(0.03634268547073924, rel=1e-9)
    _, p = mann_whitney([1, 1, 2, 2, 3, 3, 4, 4, 1, 2, 3], [5, 5, 6, 6, 7, 7, 8, 8, 5, 6, 7])
    assert p == pytest.approx(7.21313396196828e-05, rel=1e-9)
    u, p = mann_whitney(list(range(11)), [x + 0.5 for x in range(11)])  # interleaved: z well under 1
    assert u == 55 and p == pytest.approx(0.7426659029196823, rel=1e-9)


def test_a_large_sample_of_one_value_has_p_one():
    assert mann_whitney([1.0] * 11, [1.0] * 11) == (60.5, 1.0)


def test_a_tie_at_the_top_shares_its_mid_rank():
    u, p = mann_whitney([1, 2, 3, 4, 10], [5, 6, 7, 8, 10])
    assert u == 4.5 and p == pytest.approx(26 / 252)


def test_an_empty_side_gives_u_zero_and_p_one_and_no_timed_verdict():
    assert mann_whitney([], [1.0, 2.0]) == (0.0, 1.0)
    assert mann_whitney([1.0, 2.0], []) == (0.0, 1.0)
    assert timed_verdict([], [1.0]) is None and timed_verdict([1.0], []) is None


def test_a_ratio_exactly_at_the_threshold_is_past_it():
    old = [0.96, 0.98, 1.0, 1.02, 1.04]
    assert timed_verdict(old, [1.21, 1.23, 1.25, 1.27, 1.29]).verdict == "regressed"  # ratio 1.25 exactly
    assert timed_verdict(old, [0.76, 0.78, 0.8, 0.82, 0.84]).verdict == "improved"  # ratio 0.8 = 1/1.25
    assert timed_verdict([1.0, 1.0], [1.25, 1.25]).verdict == "unknown"  # too few to decide, but past x1.25
    assert timed_verdict([1.0, 1.0], [0.8, 0.8]).verdict == "unknown"


def test_p_must_be_under_alpha_not_at_it():
    old = [1.0, 1.01, 0.99, 1.02, 0.98]
    new = [x * 1.5 for x in old]
    assert timed_verdict(old, new, alpha=2 / 252).verdict == "unknown"  # p is 2/252: not under it
    assert timed_verdict(old, new, alpha=2 / 252 + 1e-9).verdict == "regressed"


def test_a_timed_verdict_carries_the_rank_tests_p_and_the_fence_it_used():
    old = [1.0, 1.01, 0.99, 1.02, 0.98]
    regressed = timed_verdict(old, [x * 1.5 for x in old])
    assert (regressed.p, regressed.band) == (pytest.approx(2 / 252), 1.25)
    assert regressed.to_json() == {"verdict": "regressed", "ratio": 1.5, "p": 0.00793651, "band": 1.25}
    same = timed_verdict(old, [x * 1.1 for x in old], band=1.4)
    assert (same.verdict, same.p, same.band) == ("same", pytest.approx(2 / 252), 1.4)


def test_noise_band_reads_four_samples_divides_by_the_median_and_skips_releases_with_too_few():
    assert noise_band({"a": [1.0, 1.0, 2.0, 2.0]}) == pytest.approx(3.0)  # IQR 1 over median 1.5
    assert noise_band({"b": [1.0, 2.0], "a": [2.0, 2.0, 2.0, 4.0, 4.0]}) == pytest.approx(4.0)  # IQR 2 / median 2
    assert noise_band({"a": [0.0, 0.0, 0.0, 0.0, 1.0]}) == 1.0  # a median of 0 gives no band

"""θ differences between models over shuffles: Welch, paired by shuffle, strata, adjustment."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from enade_bench.metrics.multiplicity import directional_holm
from enade_bench.psychometrics.theta_compare import (
    ThetaSample,
    pairs_frame,
    theta_difference,
)

from .theta_table import theta_pairs


def test_independent_is_welch_t_test() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(0.5, 0.3, 30), rng.normal(0.2, 0.5, 25)
    r = theta_difference(ThetaSample.of("a", a), ThetaSample.of("b", b))
    ref = stats.ttest_ind(a, b, equal_var=False)
    assert r.diff == pytest.approx(a.mean() - b.mean())
    assert r.t == pytest.approx(ref.statistic) and r.p_value == pytest.approx(ref.pvalue)
    assert r.df == pytest.approx(ref.df)
    ci = ref.confidence_interval(0.95)
    assert (r.ci_low, r.ci_high) == pytest.approx((ci.low, ci.high))


def test_shuffle_pairing_is_the_paired_t_test_on_shared_shuffles() -> None:
    rng = np.random.default_rng(2)
    shared = rng.normal(0, 0.4, 30)  # what shuffle k does to both models
    a, b = 0.3 + shared + rng.normal(0, 0.1, 30), shared + rng.normal(0, 0.1, 30)
    k = rng.permutation(30)  # the order of the patterns does not matter, the index does
    sa = ThetaSample.of("a", a[k], shuffle=k)
    sb = ThetaSample.of("b", b, shuffle=np.arange(30))
    paired = theta_difference(sa, sb, pairing="shuffle")
    ref = stats.ttest_rel(a, b)
    assert paired.p_value == pytest.approx(ref.pvalue) and paired.df == pytest.approx(29)
    welch = theta_difference(sa, sb)
    assert paired.se < welch.se / 2  # pairing removes the shared shuffle effect
    assert paired.diff == pytest.approx(welch.diff)


def test_strata_average_the_per_stratum_differences() -> None:
    rng = np.random.default_rng(3)
    a = np.concatenate([rng.normal(1.0, 0.2, 10), rng.normal(-1.0, 0.2, 10)])
    b = np.concatenate([rng.normal(0.5, 0.2, 10), rng.normal(-1.5, 0.2, 10)])
    s = np.repeat([2019, 2022], 10)
    r = theta_difference(ThetaSample.of("a", a, stratum=s), ThetaSample.of("b", b, stratum=s))
    per = [
        theta_difference(ThetaSample.of("a", a[s == y]), ThetaSample.of("b", b[s == y])) for y in (2019, 2022)
    ]
    assert r.strata == 2 and r.diff == pytest.approx(np.mean([p.diff for p in per]))
    assert r.se == pytest.approx(np.sqrt(sum(p.se**2 for p in per)) / 2)
    assert r.se < 0.2  # the year effect, shared, does not enter the SE


def test_pairs_are_ordered_and_holm_adjusted() -> None:
    rng = np.random.default_rng(4)
    samples = [
        ThetaSample.of(n, rng.normal(mu, 0.3, 20)) for n, mu in (("low", -1), ("high", 1), ("mid", 0.9))
    ]
    pairs = theta_pairs(samples)
    assert [(p.model_a, p.model_b) for p in pairs] == [("high", "mid"), ("high", "low"), ("mid", "low")]
    assert all(p.diff > 0 for p in pairs)
    assert np.allclose([p.p_adjusted for p in pairs], directional_holm([p.p_value for p in pairs]))
    frame = pairs_frame(theta_pairs(samples, adjust="bh"))
    assert {"diff", "se", "ci_low", "ci_high", "p_value", "p_adjusted"} <= set(frame.columns)


def test_null_coverage_of_the_welch_interval() -> None:
    """Two models with the same mean θ, 30 shuffles each: the 95 % interval covers 0 about 95 % of the time."""
    rng = np.random.default_rng(5)
    covered = [
        (
            r := theta_difference(
                ThetaSample.of("a", rng.normal(0, 0.3, 30)), ThetaSample.of("b", rng.normal(0, 0.5, 30))
            )
        ).ci_low
        <= 0
        <= r.ci_high
        for _ in range(2000)
    ]
    assert 0.93 <= np.mean(covered) <= 0.97


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="pairing"):
        theta_difference(ThetaSample.of("a", [1, 2]), ThetaSample.of("b", [1, 2]), pairing="seed")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="share no stratum"):
        theta_difference(
            ThetaSample.of("a", [1, 2], stratum=[1, 1]), ThetaSample.of("b", [1, 2], stratum=[2, 2])
        )
    with pytest.raises(ValueError, match="differ in length"):
        ThetaSample.of("a", [1, 2], shuffle=[0])

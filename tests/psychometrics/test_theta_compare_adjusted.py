"""θ pairs: the interval shown beside an adjusted p is adjusted alike (one inference per pair, issue 34)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from enade_bench.metrics.multiplicity import adjust_pvalues
from enade_bench.metrics.simultaneous import INTERVAL_NAMES, decision_levels, holds_zero
from enade_bench.psychometrics.theta_compare import (
    ThetaSample,
    pairs_frame,
    t_interval,
    theta_difference,
)

from .theta_table import theta_pairs


def _samples(rng: np.random.Generator, pairing: str) -> list[ThetaSample]:
    """3–6 models, 2–30 shuffles, means close enough that some pairs are rejected and some not."""
    n_models, n = int(rng.integers(3, 7)), int(rng.integers(2, 31))
    years = [2019, 2022][: int(rng.integers(1, 3))]  # one booklet, or two years as strata
    shared = rng.normal(0, 0.4, n)  # what shuffle k does to every model (paired designs)
    samples = []
    for m in range(n_models):
        mu = rng.normal(0, 0.15)
        size = n if pairing == "shuffle" else int(rng.integers(2, 31))
        base = shared if pairing == "shuffle" else rng.normal(0, 0.4, size)
        theta = np.concatenate(
            [mu + y - 2019 + base + rng.normal(0, rng.uniform(0.05, 0.5), size) for y in years]
        )
        samples.append(
            ThetaSample.of(
                f"m{m}", theta, shuffle=np.tile(np.arange(size), len(years)), stratum=np.repeat(years, size)
            )
        )
    return samples


@pytest.mark.parametrize("adjust", sorted(INTERVAL_NAMES))
@pytest.mark.parametrize("pairing", ["independent", "shuffle"])
def test_shown_interval_excludes_0_exactly_when_the_adjusted_p_is_below_alpha(
    adjust: str, pairing: str
) -> None:
    """A simulation grid: every pair of 200 sets of samples, each adjustment and design."""
    rng = np.random.default_rng(34)
    counts = {"different": 0, "same": 0, "unadjusted disagrees": 0}
    for _ in range(200):
        pairs = theta_pairs(_samples(rng, pairing), pairing=pairing, adjust=adjust)  # type: ignore[arg-type]
        for p in pairs:
            excludes = not holds_zero(p.statement, p.ci_low, p.ci_high)
            assert p.different == (p.p_adjusted < 0.05) == excludes, p
            assert p.bonferroni_low <= p.diff <= p.bonferroni_high
            # the shown limits are the t test's own interval at its level (with the test's df), untouched by
            # the tie-within-rounding guard, and agree with scipy's t quantile
            full = t_interval(p.diff, p.se, p.df, 1 - p.ci_level)
            half = stats.t.ppf(1 - (1 - p.ci_level) / 2, p.df) * p.se
            assert full == pytest.approx((p.diff - half, p.diff + half), rel=1e-12, abs=1e-12)
            if p.statement in ("> 0", "< 0"):  # Holm, rejected: a bound at 0 with its other limit (S&B 2008)
                assert adjust == "holm" and p.different
                expected = (full[1], 0.0) if p.diff > 0 else (0.0, full[0])
                assert (p.ci_high, p.ci_low) == pytest.approx(expected, abs=1e-12)
            else:
                assert (p.ci_low, p.ci_high) == full
                assert (
                    p.ci_low <= p.ci_low_unadjusted and p.ci_high_unadjusted <= p.ci_high
                )  # alpha_i <= alpha
            counts["different" if p.different else "same"] += 1
            unadjusted_excludes = p.ci_low_unadjusted > 0 or p.ci_high_unadjusted < 0
            counts["unadjusted disagrees"] += unadjusted_excludes != p.different
    # the grid has both decisions, and pairs where the unadjusted interval would have disagreed
    assert counts["different"] > 100 and counts["same"] > 100 and counts["unadjusted disagrees"] > 10, counts


@pytest.mark.parametrize("adjust", sorted(INTERVAL_NAMES))
def test_levels_and_p_values_are_the_shared_helpers(adjust: str) -> None:
    rng = np.random.default_rng(7)
    pairs = theta_pairs(_samples(rng, "independent"), adjust=adjust)
    pvalues = [p.p_value for p in pairs]
    assert np.allclose([p.p_adjusted for p in pairs], adjust_pvalues(pvalues, adjust))
    assert np.allclose([p.alpha_i for p in pairs], decision_levels(pvalues, 0.05, adjust))
    assert {p.adjust for p in pairs} == {adjust} and {p.ci_method for p in pairs} == {INTERVAL_NAMES[adjust]}


def test_unadjusted_interval_is_kept_under_its_own_name() -> None:
    rng = np.random.default_rng(8)
    samples = _samples(rng, "independent")
    pairs = theta_pairs(samples)
    by_name = {s.name: s for s in samples}
    for p in pairs:
        alone = theta_difference(by_name[p.model_a], by_name[p.model_b])
        assert (p.ci_low_unadjusted, p.ci_high_unadjusted) == (alone.ci_low, alone.ci_high)
        assert alone.ci_level == pytest.approx(0.95) and alone.adjust == "none"
    frame = pairs_frame(pairs)
    assert {
        "ci_low",
        "ci_high",
        "ci_level",
        "ci_method",
        "different",
        "adjust",
        "ci_low_unadjusted",
        "ci_high_unadjusted",
    } <= set(frame.columns)


def test_holm_levels_on_a_worked_family() -> None:
    """Three models far apart and one pair close: directional Holm rejects the two far pairs at
    2 alpha/6 and 2 alpha/5 (shown as bounds at 0, Strassburger & Bretz 2008) and every limit is at
    confidence 1 - 2 alpha/(2K - r) = 1 - 0.1/4."""
    rng = np.random.default_rng(9)
    samples = [
        ThetaSample.of(n, mu + rng.normal(0, 0.2, 30)) for n, mu in (("a", 2.0), ("b", 0.0), ("c", 0.0))
    ]
    pairs = theta_pairs(samples)
    close = next(p for p in pairs if {p.model_a, p.model_b} == {"b", "c"})
    far = sorted((p for p in pairs if p is not close), key=lambda p: p.p_value)
    assert [p.alpha_i for p in far] == pytest.approx([0.1 / 6, 0.1 / 5])
    assert [p.statement for p in far] == ["> 0", "> 0"] and all(
        p.ci_level == pytest.approx(0.975) for p in pairs
    )
    assert close.statement == "interval" and close.alpha_i == pytest.approx(0.1 / 4)
    assert close.ci_low < close.ci_low_unadjusted and close.ci_high_unadjusted < close.ci_high


def test_degenerate_pairs() -> None:
    """SE 0: the interval is the point (p 0 or 1); one shuffle each: no SE, no interval, not different."""
    same = theta_pairs(
        [ThetaSample.of("a", [1.0, 1.0]), ThetaSample.of("b", [1.0, 1.0]), ThetaSample.of("c", [0.0, 0.0])]
    )
    for p in same:
        assert p.different == (p.diff != 0)
        assert (p.ci_low, p.ci_high) == ((p.diff, p.diff) if not p.different else (0.0, p.diff))
        assert p.statement == ("> 0" if p.different else "interval")
    single = theta_pairs([ThetaSample.of("a", [1.0]), ThetaSample.of("b", [0.0])])[0]
    assert math.isnan(single.ci_low) and math.isnan(single.ci_level) and not single.different
    with pytest.raises(ValueError, match="adjust"):
        theta_pairs([ThetaSample.of("a", [1.0, 2.0]), ThetaSample.of("b", [0.0, 1.0])], adjust="none")


def test_holm_with_every_pair_rejected_keeps_each_pairs_other_limit() -> None:
    """All K pairs rejected: each a bound at 0 with its limit at one-sided alpha/K (K of the 2K directional
    hypotheses stay), beside the Bonferroni interval."""
    rng = np.random.default_rng(9)
    samples = [
        ThetaSample.of(n, mu + rng.normal(0, 0.2, 30)) for n, mu in (("a", 2.0), ("b", 0.0), ("c", -0.2))
    ]
    pairs = theta_pairs(samples)
    assert all(p.different and p.statement == "> 0" for p in pairs)
    for p in pairs:
        full = t_interval(p.diff, p.se, p.df, 2 * 0.05 / 3)
        assert p.ci_level == pytest.approx(1 - 0.1 / 3) and p.ci_high == pytest.approx(full[1], rel=1e-12)
        assert p.ci_low == 0.0  # the open bound at 0, written as 0 (metrics/simultaneous.ENCODING)
        assert (p.bonferroni_low, p.bonferroni_high) == t_interval(p.diff, p.se, p.df, 0.05 / 3)

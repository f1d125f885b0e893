"""The MDD under the alternative: its power, simulated with the pair's own test, is 80 %."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

from enade_bench.metrics.paired import EXACT, PAIRED_T, mcnemar_score_test, paired_difference
from enade_bench.metrics.paired_exact import SWITCH_N, exact_pvalue, exact_pvalues
from enade_bench.metrics.power import (
    _smallest,
    exact_mdd,
    exact_power,
    mcnemar_mdd,
    mcnemar_power,
    pair_mdd,
    records_of,
)
from enade_bench.metrics.power_clustered import (
    FLOOR,
    ClusteredAlternative,
    _limit_mdd,
    clustered_mdd,
    clustered_mdd_range,
    shift_mdds,
)

REPS = 4000  # Monte-Carlo SE of a rate near 0.8: 0.0063


def _simulated_power(delta: float, n: int, weaker: float, alpha: float, seed: int) -> float:
    """The pair's own single-record test (exact unconditional up to 100 questions, score above) on
    4,000 trinomial draws of the alternative: the weaker model wins a share ``weaker``."""
    rng = np.random.default_rng(seed)
    p01 = min(weaker, (1 - delta) / 2)
    counts = rng.multinomial(n, [p01 + delta, p01, 1 - delta - 2 * p01], size=REPS)
    pvalue = functools.cache(
        lambda b, c: exact_pvalue(b, c, n) if n <= SWITCH_N else mcnemar_score_test(b, c)[1]
    )
    return float(np.mean([pvalue(int(b), int(c)) < alpha for b, c, _ in counts]))


@pytest.mark.parametrize(
    ("n", "weaker", "alpha"), [(8, 0.0, 0.05), (28, 0.1, 0.05 / 3), (180, 0.15, 0.05 / 10)]
)
def test_power_at_the_single_record_mdd_is_80_percent_by_simulation(
    n: int, weaker: float, alpha: float
) -> None:
    mdd, power = (exact_mdd, exact_power) if n <= SWITCH_N else (mcnemar_mdd, mcnemar_power)
    delta = mdd(n, weaker, alpha)
    assert power(delta, n, weaker, alpha) == pytest.approx(0.8, abs=1e-6)
    rate = _simulated_power(delta, n, weaker, alpha, seed=n)
    print(
        f"single records, {n} questions, weaker model wins {weaker:.0%}: MDD {100 * delta:.1f} points, power {rate:.3f}"
    )
    assert 0.75 <= rate <= 0.85


def test_exact_power_equals_the_enumeration_of_the_trinomial() -> None:
    n, weaker, alpha, delta = 12, 0.15, 0.05, 0.35
    probs = [weaker + delta, weaker, 1 - delta - 2 * weaker]
    tables = [(b, c) for b in range(n + 1) for c in range(n + 1 - b)]
    for power, pvalue in (
        (mcnemar_power, lambda b, c: mcnemar_score_test(b, c)[1]),
        (exact_power, lambda b, c: exact_pvalue(b, c, n)),
    ):
        total = sum(
            stats.multinomial.pmf([b, c, n - b - c], n, probs) * (pvalue(b, c) < alpha) for b, c in tables
        )
        assert power(delta, n, weaker, alpha) == pytest.approx(total, abs=1e-9)


def test_the_mdd_keeps_the_weaker_models_wins() -> None:
    """Issue 63, item 5: the alternative keeps the observed share of questions the weaker model
    wins; 0, the old alternative above the observed discordance, has the largest power and so the
    smallest MDD (28 questions, 2 wins each: 34.8 points, not 18.8)."""
    assert exact_mdd(28, 2 / 28, 0.05) > exact_mdd(28, 1 / 28, 0.05) > exact_mdd(28, 0.0, 0.05)
    a = np.r_[np.ones(2), np.zeros(2), np.ones(12), np.zeros(12)]
    b = np.r_[np.zeros(2), np.ones(2), np.ones(12), np.zeros(12)]
    assert pair_mdd(paired_difference(a, b, single_record=True), 0.05) == exact_mdd(28, 2 / 28, 0.05)


def test_the_bar_eight_questions_two_models() -> None:
    """Issue 52's bar, two models on 8 questions with one record each.

    The exact unconditional score test (size 0.029 at 8 questions, where the score test's is 0.070)
    has an MDD of 69.7 points at alpha = 0.05 where the weaker model wins no question (more where it
    wins some); at the first Holm level of a 3-model demo (alpha/3) 80.1 points; at alpha/20 it is
    not reachable (8 of 8 for one model gives p = 2 * 0.5^8 = 0.0078 > 0.0025).  At 28 questions it
    is a number."""
    for weaker in (0.0, 0.125, 0.25):
        assert exact_mdd(8, weaker, 0.05) >= 0.69
        assert exact_mdd(8, weaker, 0.05 / 3) >= 0.75
        assert exact_mdd(8, weaker, 0.05 / 20) == math.inf
    a = np.array([1, 1, 1, 0, 1, 0, 1, 0], dtype=float)
    b = np.array([1, 0, 1, 0, 1, 0, 0, 0], dtype=float)
    r = paired_difference(a, b, single_record=True)
    assert r.test == EXACT and pair_mdd(r, 0.05) >= 0.69
    a28, b28 = np.r_[a, np.ones(10), np.zeros(10)], np.r_[b, np.ones(10), np.zeros(10)]
    assert 0 < pair_mdd(paired_difference(a28, b28, single_record=True), 0.05) < 1


def observed_pair(
    n: int, shuffles: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Two models on ``n`` questions in texts of 1-4 questions: each question's score over its shuffles."""
    sizes: list[int] = []
    while sum(sizes) < n:
        sizes.append(int(rng.integers(1, 5)))
    sizes[-1] -= sum(sizes) - n
    text = np.repeat(np.arange(len(sizes)), sizes)
    easy = rng.normal(0.0, 1.5, n) + rng.normal(0.0, 1.0, len(sizes))[text]
    a = rng.binomial(shuffles, 1 / (1 + np.exp(-(easy + 0.2)))) / shuffles
    b = rng.binomial(shuffles, 1 / (1 + np.exp(-easy))) / shuffles
    return a, b, [f"text{t}" for t in text]


def _spread_df(sums: np.ndarray) -> float:
    """Bonett's (2006) kurtosis-matched df of the cluster-level variance, capped at G - 1 (written again here)."""
    g = sums.size
    kurtosis = g * np.sum(sums**4) / np.sum(sums**2) ** 2
    return float(min(g - 1, 2 * (g - 1) / (kurtosis - (g - 3) / g)))


def _shifts(bases: np.ndarray, records: int, delta: float) -> dict[str, np.ndarray]:
    """Each question's shift under the location and the logit alternative, mean ``delta``."""
    logit = special.logit((2 * records * bases + 0.5) / (2 * records + 1))

    def moved(c: float) -> np.ndarray:
        return special.expit(logit + c / 2) - special.expit(logit - c / 2)

    c = optimize.brentq(lambda c: moved(c).mean() - delta, 0.0, 200.0)
    return {"location": np.full(bases.size, delta), "logit": moved(c)}


def _alternative_draw(
    e: np.ndarray,
    shift: np.ndarray,
    labels: np.ndarray,
    nu: float,
    rng: np.random.Generator,
    fixed: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """One data set of an alternative, question by question: clusters drawn with replacement, each
    cluster's residuals times a random sign and the draw's spread factor (``fixed``, else drawn from
    the posterior), plus its questions' shift."""
    groups = np.unique(labels)
    g = groups.size
    k = math.sqrt(g / (g - 1) * (fixed**2 if fixed else nu / rng.chisquare(nu)))
    picked = rng.choice(groups, size=g)
    signs = np.where(rng.random(g) < 0.5, -1.0, 1.0)
    parts = [(labels == c, sign) for c, sign in zip(picked, signs, strict=True)]
    d = np.concatenate([k * sign * e[rows] + shift[rows] for rows, sign in parts])
    return d, np.repeat(np.arange(g), [int(rows.sum()) for rows, _ in parts])


@pytest.mark.parametrize(("n", "shuffles"), [(8, 30), (28, 30), (180, 30), (28, 1)])
def test_power_at_the_clustered_mdd_is_80_percent_by_simulation(n: int, shuffles: int) -> None:
    """Questions in texts of 1-4, scored over 30 shuffles (or one binary record): the power at the MDD.

    The pair's own test (paired_difference with the clusters, at the first Holm level of three
    models) on 1,000 data sets of each alternative at the shown MDD, drawn here question by question
    and independently of metrics/power_clustered's Monte-Carlo of cluster sums (other seed, other
    code): 75-85 % rejected under the shift that sets the MDD, at least 75 % under the other."""
    rng = np.random.default_rng(1000 + n + shuffles)
    a, b, clusters = observed_pair(n, shuffles, rng)
    r = paired_difference(a, b, single_record=shuffles == 1, clusters=clusters)
    records = records_of(np.r_[a, b])
    assert r.test == PAIRED_T and r.n_clusters < n and records == shuffles
    alpha = 0.05 / 3
    mdd = pair_mdd(r, alpha)
    assert 0 < mdd < 1
    d, labels = np.asarray(r.differences), np.asarray(r.clusters)
    e = d - d.mean()
    nu = _spread_df(np.bincount(labels, e))
    each = shift_mdds(r.differences, r.clusters, alpha, bases=r.bases, records=records)
    floor = _limit_mdd(r.differences, r.clusters, alpha, FLOOR[0], r.bases, records, FLOOR[1])
    assert mdd == max(*each.values(), floor)
    upper = math.sqrt(nu / stats.chi2.ppf(FLOOR[1], nu))  # the variance at its 90 % upper limit
    for kind, shift in _shifts(np.asarray(r.bases), records, mdd).items():
        rates = []
        for fixed in (0.0, upper):
            rejected = []
            for _ in range(1000):
                x, label = _alternative_draw(e, shift, labels, nu, rng, fixed)
                rejected.append(
                    paired_difference(x, np.zeros(x.size), clusters=label.tolist()).p_value < alpha
                )
            rates.append(float(np.mean(rejected)))
        print(
            f"clustered, {n} questions in {r.n_clusters} texts, {shuffles} record(s) each: MDD {100 * mdd:.1f} "
            f"points ({kind} {100 * each[kind]:.1f}, floor {100 * floor:.1f}), power under the {kind} shift "
            f"{rates[0]:.3f}, {rates[1]:.3f} at the variance's 90 % upper limit"
        )
        assert 0.75 <= rates[0] <= (0.85 if each[kind] == mdd else 1.0), (n, shuffles, kind, mdd, rates)
        assert rates[1] >= 0.45 and (rates[1] <= 0.55 or mdd > floor), (n, shuffles, kind, mdd, rates)


def test_the_clustered_mdd_is_deterministic_and_its_monte_carlo_error_small() -> None:
    rng = np.random.default_rng(7)
    a, b, clusters = observed_pair(60, 30, rng)
    r = paired_difference(a, b, clusters=clusters)
    mdd = pair_mdd(r, 0.05)
    # the same draws, whatever the clusters' names
    assert mdd == clustered_mdd(list(r.differences), clusters, 0.05, bases=r.bases, records=30)
    others = [clustered_mdd(r.differences, clusters, 0.05, bases=r.bases, records=30, seed=s) for s in (1, 2)]
    assert all(abs(m - mdd) < 0.05 * mdd for m in others), (mdd, others)


def test_the_clustered_power_is_the_noncentral_t_averaged_over_the_spread_where_differences_are_near_normal() -> (
    None
):
    """400 questions, each its own cluster, location shift: the power is the noncentral t's averaged
    over the scaled-inverse-chi2 spread (an independent computation, scipy's nct and quad); with no
    pooled scores the logit shift is the location shift."""
    rng = np.random.default_rng(3)
    d = rng.choice([-0.3, -0.1, 0.0, 0.1, 0.2, 0.4], 400)
    alternative = ClusteredAlternative(d)
    alpha, df = 0.05, d.size - 1
    nu = _spread_df(d - d.mean())
    assert alternative.spread_df == pytest.approx(nu)
    se = np.std(d, ddof=1) / math.sqrt(d.size)
    crit = stats.t.ppf(1 - alpha / 2, df)

    def expected(delta: float) -> float:
        def power_at(x: float) -> float:  # x ~ chi2_nu, sigma = s sqrt(nu / x)
            ncp = delta / (se * math.sqrt(nu / x))
            return float(
                (stats.nct.sf(crit, df, ncp) + stats.nct.cdf(-crit, df, ncp)) * stats.chi2.pdf(x, nu)
            )

        return float(
            integrate.quad(power_at, stats.chi2.ppf(1e-9, nu), stats.chi2.isf(1e-9, nu), limit=200)[0]
        )

    for delta in (0.02, 0.03, 0.04):
        assert alternative.power(delta, alpha) == pytest.approx(expected(delta), abs=0.03)
        assert alternative.power(-delta, alpha) == alternative.power(delta, alpha)
        assert alternative.power(delta, alpha, "logit") == alternative.power(delta, alpha)


def test_the_logit_shift_moves_middle_questions_most_and_keeps_the_mean() -> None:
    """Pooled scores 0, 1/2 and 1 over 30 records: the shift's mean is delta, larger at 1/2, symmetric."""
    alternative = ClusteredAlternative(
        [0.1, -0.1, 0.0, 0.2, -0.2, 0.0], bases=[0, 0.5, 1, 0.5, 0, 1], records=30
    )
    for delta in (0.05, 0.3):
        shift = alternative.shift(delta, "logit")
        assert shift.mean() == pytest.approx(delta, abs=1e-9)
        assert shift[1] > shift[0] > 0
        assert shift[0] == pytest.approx(shift[2])


def test_a_difference_the_clustered_t_cannot_see_is_not_reachable() -> None:
    """Eight binary questions in four texts at alpha/20: t_3 at 0.99875 is 9.5, which four texts of
    two binary questions reach only when every text is alike, and then there is no standard error
    and no test; so no delta reaches 80 % (the power is 0 at every delta)."""
    a = np.array([1, 1, 1, 0, 1, 0, 1, 0], dtype=float)
    b = np.array([1, 0, 1, 0, 1, 0, 0, 1], dtype=float)
    texts = ["t1", "t1", "t2", "t2", "t3", "t3", "t4", "t4"]
    r = paired_difference(a, b, single_record=True, clusters=texts)
    assert r.test == PAIRED_T and pair_mdd(r, 0.05 / 20) == math.inf
    same = paired_difference(a, a, single_record=True, clusters=texts)
    assert math.isnan(pair_mdd(same, 0.05))  # no discordant question: no test, no MDD


@pytest.mark.parametrize("groups", [8, 28])
def test_the_mdd_range_takes_the_chi_square_limits_of_the_variance(groups: int) -> None:
    """Normal differences (nu = G - 1): a location MDD is about proportional to the spread, so the
    range's ratio is that of the two limits of chi^2_{G-1}, and it brackets the shown MDD."""
    d = stats.norm.ppf((np.arange(groups) + 0.5) / groups) * 0.1 + 0.02  # no excess kurtosis
    low, high = clustered_mdd_range(d, None, 0.05)
    ratio = math.sqrt(stats.chi2.ppf(0.9, groups - 1) / stats.chi2.ppf(0.1, groups - 1))
    assert high / low == pytest.approx(ratio, rel=0.08)
    assert low < clustered_mdd(d, None, 0.05) < high


@pytest.mark.parametrize("n", [8, 21])
def test_the_exact_mdd_kept_per_rejection_region_is_the_mdd_at_each_level(n: int) -> None:
    """Issue 61: Holm's step levels share an MDD when they reject the same tables; at levels on
    both sides of each table's p-value the kept MDD is the one computed at that level itself."""
    p = np.unique(exact_pvalues(n))
    levels = [0.05, *p[:4], *(p[1:4] * (1 - 1e-9)), *(p[1:4] * (1 + 1e-9))]
    for alpha in levels:
        direct = (
            _smallest(lambda d, a=float(alpha): exact_power(d, n, 2 / n, a), 0.8)
            if np.any(exact_pvalues(n) < alpha)
            else math.inf
        )
        assert exact_mdd(n, 2 / n, float(alpha)) == direct, alpha

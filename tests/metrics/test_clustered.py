"""Clustered intervals against statsmodels' cluster-robust OLS; Wilson where each question has one record."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from statsmodels.stats.proportion import proportion_confint

from enade_bench.metrics.accuracy import wilson_interval
from enade_bench.metrics.clustered import cluster_se, clustered_mean


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cluster_se_equals_statsmodels_cluster_robust_intercept(seed: int) -> None:
    rng = np.random.default_rng(seed)
    y = rng.random(60)
    groups = rng.integers(0, 17, 60)
    se, g = cluster_se(y, list(groups))
    fit = sm.OLS(y, np.ones(60)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    assert g == len(np.unique(groups))
    assert se == pytest.approx(float(fit.bse[0]), rel=1e-12)


def test_without_clusters_it_is_the_standard_error_of_the_mean() -> None:
    y = np.array([0.2, 0.9, 0.4, 1.0, 0.0, 0.7])
    se, g = cluster_se(y)
    assert g == 6 and se == pytest.approx(y.std(ddof=1) / np.sqrt(6), rel=1e-12)


def test_single_binary_records_get_wilson_like_statsmodels() -> None:
    scores = [1] * 17 + [0] * 13
    r = clustered_mean(scores)
    low, high = proportion_confint(17, 30, alpha=0.05, method="wilson")
    assert r.method == "wilson" and r.design_effect == pytest.approx(1.0)
    assert (r.ci_low, r.ci_high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))


def test_repeated_records_widen_the_interval_and_report_the_design_effect() -> None:
    """30 shuffles of a question the model knows (or not) are one measurement, not 30."""
    rng = np.random.default_rng(3)
    knows = rng.random(40) < 0.6
    scores = np.where(knows, 0.95, 0.1)
    r = clustered_mean(scores, n_records=np.full(40, 30))
    assert r.method == "clustered" and r.n_records == 1200 and r.n_questions == 40
    assert r.design_effect > 3  # the naive interval pretends there are 1,200 questions
    assert r.ci_low < r.mean < r.ci_high


def test_shared_stimuli_change_the_standard_error() -> None:
    scores = np.array([1, 1, 1, 0, 0, 0, 1, 1, 0, 0], dtype=float)
    stimuli = ["a", "a", "a", "b", "b", "b", "c", "c", "d", "d"]
    alone, clustered = clustered_mean(scores, np.full(10, 2)), clustered_mean(scores, np.full(10, 2), stimuli)
    assert clustered.n_clusters == 4 and clustered.se > alone.se


def test_all_questions_scored_the_same_get_an_interval_not_a_point() -> None:
    # 10 questions, two shuffles each, all wrong: the t interval was [0, 0] (inspect_ai's
    # two-epoch logs of two models that never answered in the scorer's form).
    r = clustered_mean(np.zeros(10), n_records=np.full(10, 2))
    assert r.method == "wilson-clusters"
    assert (r.ci_low, r.ci_high) == pytest.approx(wilson_interval(0, 10))
    assert r.ci_high > 0.25
    right = clustered_mean(np.ones(6), n_records=np.full(6, 3), clusters=["a", "a", "b", "b", "c", "c"])
    assert (right.ci_low, right.ci_high) == pytest.approx(wilson_interval(3, 3))


def test_a_clustered_interval_stays_within_zero_and_one() -> None:
    # Three questions near the ceiling: mean ± t_2 · se ran past 100 %.
    r = clustered_mean([1.0, 0.9, 1.0], n_records=[10, 10, 10])
    assert r.method == "clustered"
    assert r.mean + 4.303 * r.se > 1
    assert 0 <= r.ci_low < r.mean < r.ci_high == 1.0

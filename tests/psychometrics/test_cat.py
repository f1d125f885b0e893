"""Adaptive testing: selection, stopping, live mode and the published-pattern targets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from enade_bench.benchmarks.enem.published import load_published
from enade_bench.psychometrics.cat import (
    CatConfig,
    predicted_shift,
    rule_text,
    run_cat,
    select_item,
    stop_rule,
)
from enade_bench.psychometrics.cat_posthoc import simulate_cat
from enade_bench.psychometrics.cat_summary import cat_curve, cat_summary
from enade_bench.psychometrics.estimation import eap
from enade_bench.psychometrics.irt import ItemParams, item_information
from enade_bench.psychometrics.personfit import simulate_responses


def bank(n: int = 40, seed: int = 3) -> ItemParams:
    rng = np.random.default_rng(seed)
    return ItemParams.from_arrays(rng.uniform(0.8, 2.5, n), rng.normal(0, 1.2, n), rng.uniform(0, 0.25, n))


def test_select_item_is_the_most_informative_available_item() -> None:
    items = bank()
    theta = np.array([-1.0, 0.0, 2.0])
    avail = np.ones((3, len(items)), dtype=bool)
    avail[1, :5] = False
    chosen = select_item(theta, items, avail)
    info = item_information(theta, items)
    for row in range(3):
        candidates = np.flatnonzero(avail[row])
        assert chosen[row] == candidates[np.argmax(info[row, candidates])]


def test_randomesque_draws_among_the_k_best_and_spreads_exposure() -> None:
    items = bank()
    theta = np.zeros(2000)
    avail = np.ones((2000, len(items)), dtype=bool)
    chosen = select_item(theta, items, avail, randomesque=4, rng=np.random.default_rng(1))
    best4 = set(np.argsort(-item_information(0.0, items))[:4].tolist())
    assert set(chosen.tolist()) == best4
    counts = np.bincount(chosen, minlength=len(items))[list(best4)]
    assert counts.min() > 400  # about 500 each
    again = select_item(theta, items, avail, randomesque=4, rng=np.random.default_rng(1))
    assert np.array_equal(chosen, again)
    with pytest.raises(ValueError, match="rng"):
        select_item(theta, items, avail, randomesque=4)


def test_post_hoc_path_reproduces_eap_on_the_items_given() -> None:
    items = bank()
    rng = np.random.default_rng(5)
    x = simulate_responses(rng.normal(0, 1, 50), items, rng)
    x[:10, :7] = np.nan  # some items unavailable to some patterns
    sim = simulate_cat(x, items, CatConfig(target_se=None))
    k = 12
    for row in (0, 17, 42):
        given = sim.order[row, :k]
        partial = np.full(len(items), np.nan)
        partial[given] = x[row, given]
        est = eap(partial[None, :], items)
        assert sim.theta_path[row, k - 1] == pytest.approx(est.theta[0], abs=1e-10)
        assert sim.se_path[row, k - 1] == pytest.approx(est.se[0], abs=1e-10)
        assert not np.isnan(x[row, sim.order[row][sim.order[row] >= 0]]).any()
    # After every available item the CAT estimate is the full-test estimate.
    last = sim.n_available - 1
    assert np.allclose(sim.theta_path[np.arange(50), last], sim.theta_full, atol=1e-10)


def test_stopping_rules() -> None:
    items = bank()
    rng = np.random.default_rng(9)
    x = simulate_responses(rng.normal(0, 1, 200), items, rng)
    sim = simulate_cat(x, items, CatConfig(target_se=0.4, min_items=3))
    assert (sim.n_items >= 3).all()
    by_rule = sim.stopped_by == "rule"
    assert (sim.se[by_rule] <= 0.4).all()
    # the rule fired at the first step where it could
    for row in np.flatnonzero(by_rule)[:20]:
        earlier = sim.se_path[row, 2 : sim.n_items[row] - 1]
        assert (earlier > 0.4).all()
    budget = simulate_cat(x, items, CatConfig(target_se=0.0, max_items=5))
    assert (budget.n_items == 5).all() and (budget.stopped_by == "budget").all()
    margin = simulate_cat(x, items, CatConfig(target_se=0.2, full_se_margin=0.05))
    assert np.allclose(margin.target_se, np.maximum(0.2, margin.se_full + 0.05))


def test_predicted_shift() -> None:
    assert predicted_shift(0.5, 0.0) == pytest.approx(0.0)
    # s = 0.5, R = 12: full SD = (4 + 12)^-1/2 = 0.25; shift = sqrt(0.25 - 0.0625)
    assert predicted_shift(0.5, 12.0) == pytest.approx(np.sqrt(0.1875))


def test_live_mode_asks_only_the_selected_items_and_matches_post_hoc() -> None:
    items = bank(60)
    rng = np.random.default_rng(11)
    true = 0.7
    pattern = simulate_responses(np.array([true]), items, rng)[0]
    asked: list[int] = []

    def answer(j: int) -> bool:
        asked.append(j)
        return bool(pattern[j] == 1.0)

    config = CatConfig(target_se=0.3, max_items=30)
    trace = run_cat(answer, items, config)
    assert list(trace.items) == asked and len(set(asked)) == len(asked)
    assert trace.n_items <= 30
    assert (trace.stopped_by == "rule" and trace.se[-1] <= 0.3) or trace.n_items == 30
    post = simulate_cat(pattern[None, :], items, config)
    assert post.n_items[0] == trace.n_items
    assert list(post.order[0, : trace.n_items]) == list(trace.items)
    assert post.theta[0] == pytest.approx(trace.theta[-1], abs=1e-10)


def test_live_mode_recovers_a_simulated_respondent() -> None:
    items = bank(80, seed=4)
    errors = []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        true = rng.normal()
        trace = run_cat(
            lambda j, t=true, r=rng: bool(
                r.random()
                < float(items.c[j] + (1 - items.c[j]) / (1 + np.exp(-items.a[j] * (t - items.b[j]))))
            ),
            items,
            CatConfig(target_se=0.3, max_items=40, randomesque=2),
            rng,
        )
        errors.append((trace.theta[-1] - true) / max(trace.se[-1], 1e-9))
    z = np.array(errors)
    assert abs(z.mean()) < 0.5 and 0.5 < z.std() < 1.6


@pytest.fixture(scope="module")
def published(enem_dir: Path):  # type: ignore[no-untyped-def]
    return load_published(enem_dir)


def test_published_patterns_full_test_matches_mirt(published) -> None:  # type: ignore[no-untyped-def]
    assert len(published.rows) == 2400
    full = eap(published.responses, published.items)
    assert np.abs(full.theta - published.rows["IRT_SCORE"].to_numpy()).max() < 1e-3


def test_cat_on_the_published_patterns(published) -> None:  # type: ignore[no-untyped-def]
    """Issue 12's stopping rule on the 2,400 patterns with INEP parameters.

    Measured: median 8 items, 43 % within 0.15 of the full-test θ. The SE rule
    alone cannot reach 80 % within 0.15: a posterior SD of 0.35 against a
    full-test 0.275 leaves sqrt(0.35² - 0.275²) ≈ 0.22 SD of further change.
    At a fixed length of 21 items the error target holds (see the curve).
    """
    config = stop_rule("additive")
    assert config == CatConfig(target_se=0.35, full_se_margin=0.05)
    sim = simulate_cat(published.responses, published.items, config)
    summary = cat_summary(sim)
    assert np.median(sim.se_full) == pytest.approx(0.275, abs=0.005)
    assert summary.median_items <= 20
    assert (sim.se[sim.stopped_by == "rule"] <= sim.target_se[sim.stopped_by == "rule"]).all()
    assert 0.3 < summary.share_within < 0.6
    curve = cat_curve(sim)
    assert curve["se_median"].iloc[0] > curve["se_median"].iloc[19] > curve["se_median"].iloc[-1]
    at = curve.set_index("k")
    assert at.loc[21, "within_tol"] >= 0.8  # a 21-item CAT meets the error target
    assert at.loc[10, "within_tol"] < 0.8


def test_cat_meets_the_target_with_the_quadrature_rule(published) -> None:  # type: ignore[no-untyped-def]
    """SE ≤ sqrt(SE_full² + 0.1²) after at least 15 items: median 20 items, 81 % within 0.15.

    The two settings were chosen on a small grid (margin 0.06-0.13, minimum 1/10/15 items) on these
    same patterns; the margin has a meaning of its own: Var(θ_full - θ_k) ≈ SE_k² - SE_full², so the
    CAT stops when the full test could move θ by about 0.1 (one SD) at most.
    """
    config = stop_rule("quadrature")  # the default of irt cat and the study
    assert config == CatConfig(target_se=0.0, full_se_margin=0.1, margin_kind="quadrature", min_items=15)
    sim = simulate_cat(published.responses, published.items, config)
    summary = cat_summary(sim)
    assert summary.passed
    assert summary.median_items <= 20 and summary.share_within >= 0.8
    assert np.allclose(sim.target_se, np.sqrt(sim.se_full**2 + 0.01))


def test_stop_rules_by_name_and_overrides() -> None:
    assert stop_rule("additive", min_items=3).min_items == 3
    assert stop_rule("quadrature", full_se_margin=0.08).full_se_margin == 0.08
    assert rule_text(stop_rule("additive")) == "SE <= max(0.35, full-test SE + 0.05)"
    with pytest.raises(ValueError, match="unknown stopping rule"):
        stop_rule("median")

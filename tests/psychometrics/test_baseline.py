"""Random-choice baseline."""

from __future__ import annotations

import numpy as np
import pytest

from enade_bench.psychometrics.baseline import random_baseline, random_responses
from enade_bench.psychometrics.irt import ItemParams


def test_random_responses_rate_and_layout() -> None:
    ids = [f"q{k}" for k in range(50)]
    frame = random_responses(ids, np.random.default_rng(5), n_shuffles=200)
    assert len(frame) == 200 * 50
    assert frame.groupby("shuffle").size().eq(50).all()
    # 10,000 Bernoulli(0.2) draws: SD of the mean 0.004.
    assert frame["correct"].mean() == pytest.approx(0.2, abs=0.016)


def test_random_responses_per_item_options_and_seed() -> None:
    options = {"two": 2, "four": 4}
    one = random_responses(["two", "four"], np.random.default_rng(9), n_shuffles=4000, n_options=options)
    rates = one.groupby("item_id")["correct"].mean()
    assert rates["two"] == pytest.approx(0.5, abs=0.03)
    assert rates["four"] == pytest.approx(0.25, abs=0.03)
    again = random_responses(["two", "four"], np.random.default_rng(9), n_shuffles=4000, n_options=options)
    assert one.equals(again)


def test_random_baseline_scores_low() -> None:
    rng = np.random.default_rng(11)
    items = ItemParams.from_arrays(rng.uniform(1, 2, 45), rng.normal(0.5, 1, 45), np.full(45, 0.2))
    per = random_baseline(items, rng, n_shuffles=30)
    assert len(per) == 30
    assert per["accuracy"].mean() == pytest.approx(0.2, abs=0.05)
    assert per["theta"].mean() < -0.5


def test_seed_spread_follows_the_binomial_sd() -> None:
    from enade_bench.psychometrics.baseline import seed_spread

    rng = np.random.default_rng(2)
    items = ItemParams.from_arrays(rng.uniform(1, 2, 40), rng.normal(0, 1, 40), np.full(40, 0.2))
    spread = seed_spread(items, range(30), (5, 40), threshold=0.02)
    table = spread.table.set_index("n_shuffles")
    # SD over 30 seeds of the mean of J·K Bernoulli(0.2): sqrt(0.16 / (40 K)); 30 seeds → ±13 % relative
    for k in (5, 40):
        assert table.loc[k, "accuracy_sd"] == pytest.approx(np.sqrt(0.16 / (40 * k)), rel=0.35)
    assert table.loc[40, "theta_sd"] < table.loc[5, "theta_sd"]
    # SD(K) = sqrt(0.16 / (40 K)) equals 0.02 at K = 10; the criterion is strict (SD < threshold)
    assert spread.required_expected in (10, 11)
    assert spread.stable_at == 40
    other = seed_spread(items, range(3), (5,), stream=1).table
    same = seed_spread(items, range(3), (5,), stream=0).table
    assert other["accuracy_mean"].iloc[0] != same["accuracy_mean"].iloc[0]

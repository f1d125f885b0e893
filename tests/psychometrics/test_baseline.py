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

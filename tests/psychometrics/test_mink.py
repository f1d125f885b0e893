"""Min-K% Prob and its correlation with accuracy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from enade_bench.psychometrics.mink import min_k_prob, mink_accuracy_correlation


def test_min_k_prob_hand_worked() -> None:
    logprobs = [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0, -10.0]
    assert min_k_prob(logprobs) == -9.5  # lowest 20% = {-10, -9}
    assert min_k_prob(logprobs, k=100) == -5.5
    assert min_k_prob(np.array(logprobs)[::-1], k=30) == -9.0  # order does not matter
    assert min_k_prob([-0.5, -4.0, -1.0]) == -4.0  # floor(0.6) -> at least one token


@pytest.mark.parametrize(
    ("values", "k", "message"),
    [
        ([], 20, "at least one"),
        ([-1.0, 0.5], 20, "<= 0"),
        ([-1.0, np.nan], 20, "finite"),
        ([-1.0], 0, "k must"),
    ],
)
def test_min_k_prob_rejects_bad_input(values: list[float], k: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        min_k_prob(values, k)


def test_correlation_hand_worked() -> None:
    # Per item: mink (1, 2, 3), accuracy (1/3, 1, 2/3) -> deviations (-1, 0, 1) and (-1/3, 1/3, 0):
    # r = (1/3) / sqrt(2 * 2/9) = 0.5; t = 0.5 sqrt(1 / 0.75) = 1/sqrt(3) on 1 df -> p = 2/3.
    frame = pd.DataFrame(
        {
            "item_id": ["a"] * 3 + ["b"] * 3 + ["c"] * 3,
            "mink": [1.0] * 3 + [2.0] * 3 + [3.0] * 3,
            "correct": [0, 0, 1, 1, 1, 1, 0, 1, 1],
        }
    )
    res = mink_accuracy_correlation(frame)
    assert res.r == pytest.approx(0.5)
    assert res.p_value == pytest.approx(2 / 3)
    assert res.n_items == 3


def test_correlation_degenerate_cases() -> None:
    frame = pd.DataFrame({"item_id": ["a", "b", "c"], "mink": [1.0, 2.0, 3.0], "correct": [1, 1, 1]})
    assert np.isnan(mink_accuracy_correlation(frame).r)
    with pytest.raises(ValueError, match="lacks"):
        mink_accuracy_correlation(frame.drop(columns="mink"))

"""3PL probability, information and likelihood against hand-worked values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from enade_bench.psychometrics import irt
from enade_bench.psychometrics.irt import (
    ItemParams,
    as_response_matrix,
    item_information,
    prob,
)

from .likelihood import log_likelihood


def test_prob_hand_worked() -> None:
    # a=1.5, b=0.5, c=0.25 at theta=1: 0.25 + 0.75 / (1 + e^-0.75);
    # e^-0.75 = 0.4723665527, 1/1.4723665527 = 0.6791786992 -> 0.7593840244.
    items = ItemParams.from_arrays([1.5, 1.0], [0.5, 0.0], [0.25, 0.0])
    p = prob(1.0, items)
    assert p[0] == pytest.approx(0.7593840244, abs=1e-9)
    # 2PL at theta = b: exactly one half.
    assert prob(0.0, items)[1] == pytest.approx(0.5, abs=1e-15)


def test_prob_limits_are_c_and_one() -> None:
    items = ItemParams.from_arrays([2.0], [0.0], [0.2])
    assert prob(-40.0, items)[0] == pytest.approx(0.2, abs=1e-12)
    assert prob(40.0, items)[0] == pytest.approx(1.0, abs=1e-12)


def test_prob_broadcasts_over_theta_shape() -> None:
    items = ItemParams.from_arrays([1.0, 2.0, 0.5], [0.0, 1.0, -1.0])
    assert prob(np.zeros((4, 7)), items).shape == (4, 7, 3)


def test_information_equals_squared_slope_over_variance() -> None:
    items = ItemParams.from_arrays([1.7, 0.6], [0.3, -1.2], [0.2, 0.05])
    theta = np.linspace(-3, 3, 13)
    h = 1e-5
    slope = (prob(theta + h, items) - prob(theta - h, items)) / (2 * h)
    p = prob(theta, items)
    np.testing.assert_allclose(item_information(theta, items), slope**2 / (p * (1 - p)), rtol=1e-6)


def test_information_2pl_is_a2_pq() -> None:
    items = ItemParams.from_arrays([1.3], [0.4])
    theta = np.array([-1.0, 0.4, 2.0])
    p = prob(theta, items)[:, 0]
    np.testing.assert_allclose(item_information(theta, items)[:, 0], 1.69 * p * (1 - p), rtol=1e-12)


def test_log_likelihood_skips_missing() -> None:
    items = ItemParams.from_arrays([1.0, 1.0, 1.0], [0.0, 1.0, -1.0])
    p = prob(0.0, items)
    got = log_likelihood([0.0], [[1.0, np.nan, 0.0]], items)[0]
    assert got == pytest.approx(np.log(p[0]) + np.log(1 - p[2]), abs=1e-12)


@pytest.mark.parametrize(
    ("a", "b", "c", "message"),
    [
        ([0.0], [0.0], [0.0], "a = 0.0"),
        ([-1.0], [0.0], [0.0], "a = -1.0"),
        ([1.0], [np.nan], [0.0], "b = nan"),
        ([1.0], [0.0], [1.0], "c = 1.0"),
        ([1.0], [0.0], [-0.1], "c = -0.1"),
    ],
)
def test_item_params_reject_out_of_range(
    a: list[float], b: list[float], c: list[float], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        ItemParams.from_arrays(a, b, c)


def test_item_params_reject_duplicate_ids() -> None:
    with pytest.raises(ValueError, match="unique"):
        ItemParams.from_arrays([1, 1], [0, 0], None, ["x", "x"])


def test_item_params_frame_round_trip() -> None:
    frame = pd.DataFrame(
        {"item_id": ["q1", "q2", "q3"], "a": [1.0, 2.0, 3.0], "b": [0, 1, 2], "c": [0.1, None, 0.3]}
    )
    items = ItemParams.from_frame(frame)
    assert items.c.tolist() == [0.1, 0.0, 0.3]
    assert items.to_frame()["item_id"].tolist() == ["q1", "q2", "q3"]


def test_response_matrix_rejects_other_values() -> None:
    with pytest.raises(ValueError, match="row 1, column 0"):
        as_response_matrix([[1, 0], [2, 1]], 2)
    with pytest.raises(ValueError, match="shape"):
        as_response_matrix([[1, 0, 1]], 2)


def test_test_information_is_not_collected_by_pytest() -> None:
    assert getattr(irt.test_information, "__test__", True) is False

"""Tidy frames, per-shuffle scoring, summaries and the P(correct) matrix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from enade_bench.psychometrics.classical import discrimination_index
from enade_bench.psychometrics.estimation import estimate_theta
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.psychometrics.shuffles import (
    p_correct_matrix,
    score_shuffles,
    summarise_shuffles,
)
from enade_bench.psychometrics.tidy import aggregate_shuffles, to_wide, validate_tidy

ITEMS = ItemParams.from_arrays([1.0, 1.5, 0.8], [0.5, -1.0, 1.5], [0.2, 0.2, 0.2], ["q1", "q2", "q3"])


def shuffle_discrimination(
    frame: pd.DataFrame, per_shuffle: pd.DataFrame, fraction: float = 0.25, threshold: float = 0.2
) -> pd.DataFrame:
    """Discrimination index with every (respondent, shuffle) pattern as a unit.

    ``per_shuffle`` is :func:`score_shuffles`' output (its ``theta`` ranks the
    units); see :func:`~enade_bench.psychometrics.classical.discrimination_index`.
    """
    wide = to_wide(frame)
    keyed = per_shuffle.set_index(["respondent", "shuffle"])["theta"]
    theta = keyed.reindex(wide.index).to_numpy(dtype=np.float64)
    return discrimination_index(wide, theta, fraction=fraction, threshold=threshold)


def _tidy() -> pd.DataFrame:
    rows = [
        # model A, shuffle 0: q1 right, q2 right, q3 wrong, annulled item qx right
        ("A", 0, "q1", 1),
        ("A", 0, "q2", 1),
        ("A", 0, "q3", 0),
        ("A", 0, "qx", 1),
        ("A", 1, "q1", 0),
        ("A", 1, "q2", 1),
        ("A", 1, "q3", 0),
        ("A", 1, "qx", 1),
        ("A", 2, "q1", 1),
        ("A", 2, "q2", 1),
        ("A", 2, "q3", 1),
        ("A", 2, "qx", 0),
        ("B", 0, "q1", 0),
        ("B", 0, "q2", 1),
        ("B", 0, "q3", 0),
        ("B", 1, "q1", 0),
        ("B", 1, "q2", 0),
        ("B", 1, "q3", 1),
    ]
    return pd.DataFrame(rows, columns=["respondent", "shuffle", "item_id", "correct"])


def test_validate_tidy_rejects_bad_frames() -> None:
    frame = _tidy()
    with pytest.raises(ValueError, match="lacks column"):
        validate_tidy(frame.drop(columns="shuffle"))
    bad = frame.copy()
    bad.loc[3, "correct"] = 2
    with pytest.raises(ValueError, match="row 3"):
        validate_tidy(bad)
    with pytest.raises(ValueError, match="more than once"):
        validate_tidy(pd.concat([frame, frame.iloc[[0]]]))


def test_aggregate_shuffles_majority() -> None:
    majority = aggregate_shuffles(_tidy())
    assert majority["qx"].isna().loc["B"]
    assert majority.loc["A", "q1"] == 1.0
    assert majority.loc["A", "q3"] == 0.0
    assert majority.loc["B", "q2"] == 1.0  # 1 of 2: ties go to correct


def test_score_shuffles_equals_direct_estimation() -> None:
    per = score_shuffles(_tidy(), ITEMS, method="map")
    wide = to_wide(_tidy(), items=ITEMS.item_ids)
    direct = estimate_theta(wide.to_numpy(float), ITEMS, "map")
    np.testing.assert_allclose(per["theta"], direct.theta)
    assert per["accuracy"].tolist() == pytest.approx([0.75, 0.5, 0.75, 1 / 3, 1 / 3])
    assert per["n_items"].tolist() == [3, 3, 3, 3, 3]
    assert np.isnan(per["lz"].iloc[2])  # all three scored items right: not assessable
    assert per["lz_star"].notna().sum() == 4


def test_summaries_hand_worked() -> None:
    per = pd.DataFrame({"respondent": "m", "theta": [0.0, 1.0, 2.0, 3.0, 4.0], "lz": np.nan, "accuracy": 0.5})
    pct = summarise_shuffles(per)
    # Percentile interval of 0..4: 2.5% -> 0.1, 97.5% -> 3.9 (linear interpolation).
    assert pct.loc[0, "theta_mean"] == 2.0
    assert pct.loc[0, "theta_low"] == pytest.approx(0.1)
    assert pct.loc[0, "theta_high"] == pytest.approx(3.9)
    assert pct.loc[0, "n_lz"] == 0
    assert pct["lz_mean"].isna().iloc[0]


def test_p_correct_matrix_orders_items_by_difficulty() -> None:
    matrix = p_correct_matrix(_tidy(), ITEMS)
    assert list(matrix.columns) == ["q2", "q1", "q3"]
    assert matrix.loc["A", "q1"] == pytest.approx(2 / 3)
    assert matrix.loc["B", "q3"] == pytest.approx(0.5)


def test_shuffle_discrimination_ranks_patterns_by_their_theta() -> None:
    frame = _tidy()
    per = score_shuffles(frame, ITEMS, method="eap")
    table = shuffle_discrimination(frame, per, fraction=0.4)
    # 5 patterns, groups of 2: top and bottom by the per-shuffle theta, matched by (respondent, shuffle).
    order = per.sort_values("theta", kind="stable")
    bottom = pd.MultiIndex.from_frame(order.head(2)[["respondent", "shuffle"]])
    top = pd.MultiIndex.from_frame(order.tail(2)[["respondent", "shuffle"]])
    wide = to_wide(frame)
    expected = wide.reindex(top).mean() - wide.reindex(bottom).mean()
    got = table.set_index("item_id")["di"]
    for item in ["q1", "q2", "q3"]:
        assert got[item] == pytest.approx(expected[item])

"""Test information curve, its peak and the position of θ on it."""

from __future__ import annotations

import numpy as np
import pytest

from enade_bench.psychometrics.information import (
    information_curve,
    information_peak,
    measurement_position,
)
from enade_bench.psychometrics.irt import ItemParams


def test_single_2pl_item_peaks_at_b_with_a2_over_4() -> None:
    items = ItemParams.from_arrays([1.6], [0.7])
    peak = information_peak(items)
    assert peak.theta == pytest.approx(0.7, abs=1e-5)
    assert peak.information == pytest.approx(1.6**2 / 4, rel=1e-9)


def test_single_3pl_item_peak_matches_birnbaum() -> None:
    # Birnbaum (1968): theta_max = b + ln[(1 + sqrt(1 + 8c)) / 2] / a.
    a, b, c = 1.3, -0.4, 0.25
    items = ItemParams.from_arrays([a], [b], [c])
    expected = b + np.log((1 + np.sqrt(1 + 8 * c)) / 2) / a
    assert information_peak(items).theta == pytest.approx(expected, abs=1e-5)


def test_curve_se_is_inverse_sqrt_information() -> None:
    items = ItemParams.from_arrays([1.0, 2.0], [0.0, 1.0], [0.2, 0.1])
    curve = information_curve(items, [-1.0, 0.0, 1.0])
    np.testing.assert_allclose(curve["se"], 1 / np.sqrt(curve["information"]))


def test_measurement_position_flags_far_theta() -> None:
    items = ItemParams.from_arrays([1.5, 1.2, 1.8], [-0.5, 0.0, 0.5], [0.2, 0.2, 0.2])
    peak = information_peak(items)
    frame = measurement_position([peak.theta, 4.0, -4.0, np.inf], items)
    assert frame["relative_information"].iloc[0] == pytest.approx(1.0, abs=1e-9)
    assert frame["poorly_measured"].tolist() == [False, True, True, True]
    assert frame["side"].tolist()[1:3] == ["above", "below"]

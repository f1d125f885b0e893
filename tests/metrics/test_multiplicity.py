"""Holm (two-sided and directional) and Benjamini-Hochberg against statsmodels."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from enade_bench.metrics.multiplicity import (
    adjust_pvalues,
    benjamini_hochberg,
    directional_holm,
    holm,
)


@pytest.mark.parametrize("seed", range(5))
def test_adjustments_equal_statsmodels(seed: int) -> None:
    p = np.random.default_rng(seed).random(int(10 + 7 * seed)) ** 3
    assert np.allclose(holm(p), multipletests(p, method="holm")[1], rtol=0, atol=1e-15)
    assert np.allclose(benjamini_hochberg(p), multipletests(p, method="fdr_bh")[1], rtol=0, atol=1e-15)
    one_sided = multipletests(np.r_[p / 2, 1 - p / 2], method="holm")[1][: p.size]
    assert np.allclose(directional_holm(p), one_sided, rtol=0, atol=1e-15)


def test_nan_p_values_are_left_out_of_the_family() -> None:
    out = adjust_pvalues([0.01, float("nan"), 0.04], "holm")
    assert np.isnan(out[1]) and out[0] == pytest.approx(0.02) and out[2] == pytest.approx(0.06)  # 4p/2, 3p/2

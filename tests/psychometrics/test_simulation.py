"""Simulated human population and the l_z null study."""

from __future__ import annotations

import numpy as np

from bench.lz_null_study import lz_null_study
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.psychometrics.simulation import simulate_population


def _items(rng: np.random.Generator) -> ItemParams:
    return ItemParams.from_arrays(rng.uniform(1.0, 2.5, 45), rng.normal(0.8, 0.8, 45), np.full(45, 0.2))


def test_population_tracks_true_theta() -> None:
    rng = np.random.default_rng(1)
    pop = simulate_population(_items(rng), 2000, rng)
    assert abs(pop["true_theta"].mean()) < 0.1
    assert np.corrcoef(pop["true_theta"], pop["theta"])[0, 1] > 0.85
    assert pop["accuracy"].between(0, 1).all()


def test_lz_with_eap_is_conservative_at_high_theta() -> None:
    """docs/psychometrics.md's claim: at high θ, l_z with EAP θ flags far fewer than α; l_z* with ML does not."""
    rng = np.random.default_rng(2)
    table = lz_null_study(_items(rng), [0.0, 2.5], 3000, rng, methods=("eap", "ml"))
    eap_high = table.query("method == 'eap' and statistic == 'lz' and true_theta == 2.5").iloc[0]
    star_high = table.query("method == 'ml' and statistic == 'lz_star' and true_theta == 2.5").iloc[0]
    assert eap_high["flag_rate"] < 0.02
    assert eap_high["sd"] < 0.8
    assert 0.03 < star_high["flag_rate"] < 0.08
    assert set(table.query("method == 'eap'")["statistic"]) == {"lz"}

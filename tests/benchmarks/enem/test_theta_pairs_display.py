"""The ENEM θ-pairs table as shown: the printed interval keeps the side of 0 of its pair's decision."""

from __future__ import annotations

import numpy as np
import pandas as pd

from enade_bench.benchmarks.enem.steps.theta_pairs import display_pairs, pairs_note
from enade_bench.psychometrics.theta_compare import ThetaSample, pairs_frame, theta_pairs


def _printed_excludes_0(text: str) -> bool:
    low, high = (float(v) for v in text.split("[")[1].rstrip("]").split(", "))
    return low > 0 or high < 0


def test_printed_interval_agrees_with_the_adjusted_decision() -> None:
    """Many small tables (some bounds within 0.005 of 0): the printed interval excludes 0 ⇔ adjusted p < 0.05."""
    rng = np.random.default_rng(11)
    frames = []
    for adjust in ("holm", "bonferroni", "bh"):
        for _ in range(60):
            samples = [ThetaSample.of(f"m{m}", rng.normal(rng.normal(0, 0.1), 0.3, 20)) for m in range(4)]
            frames.append(pairs_frame(theta_pairs(samples, adjust=adjust)).assign(exam=f"{adjust}{_}"))
    data = pd.concat(frames, ignore_index=True)
    shown = display_pairs(data, ["exam"])
    printed = shown["Δθ [adjusted CI]"].map(_printed_excludes_0).to_numpy()
    assert (printed == (data["p_adjusted"] < 0.05).to_numpy()).all()
    assert (printed == data["different"].to_numpy()).all()
    assert data["different"].any() and not data["different"].all()
    levels = shown["CI level"].str.rstrip(" %").astype(float)
    assert np.allclose(levels, 100 * (1 - data["ci_level"]), atol=0.01)
    note = pairs_note(data)
    assert all(a in note for a in ("holm: Holm-compatible", "bonferroni: Bonferroni", "bh: false-coverage"))
    assert "ci_low_unadjusted" in note

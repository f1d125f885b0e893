"""Simultaneous rank sets from Bonferroni decisions on the pairwise tests."""

from __future__ import annotations

import math
from dataclasses import replace
from itertools import combinations

import numpy as np
import pytest

from enade_bench.compare.calibration import SEED, Design, LettersRow, _clustered_p, _scores
from enade_bench.metrics.ranks import rank_sets


def simulate_rank_sets(
    design: Design, n_models: int = 4, replications: int = 1000, alpha: float = 0.05, seed: int = SEED
) -> LettersRow:
    """Models ``theta_diff`` logits apart: how often every rank set holds its true rank (``share``)."""
    rng = np.random.default_rng(seed)
    thetas = [design.theta_diff * k for k in range(n_models)]  # model k has true rank n_models - k
    scores, onehot = _scores(design, thetas, replications, rng)
    names = [f"m{k}" for k in range(n_models)]
    pairs = [(i, j) for i in range(n_models) for j in range(i + 1, n_models)]
    p = np.stack([_clustered_p(scores[i] - scores[j], onehot) for i, j in pairs], axis=1)
    diff = np.stack([(scores[i] - scores[j]).mean(axis=1) for i, j in pairs], axis=1)
    covered = 0
    for r in range(replications):
        given = {(names[i], names[j]): (float(diff[r, k]), float(p[r, k])) for k, (i, j) in enumerate(pairs)}
        sets = rank_sets(given, names, alpha)
        covered += all(sets[names[k]][0] <= n_models - k <= sets[names[k]][1] for k in range(n_models))
    return LettersRow(design, replications, covered / replications)


def test_decisions_bound_the_ranks() -> None:
    """a > b and a > c surely; b, c and d undecided; d not comparable with anyone."""
    pairs = {
        ("a", "b"): (0.2, 0.001),
        ("a", "c"): (0.3, 0.0001),
        ("b", "c"): (0.01, 0.6),
        ("a", "d"): (0.5, math.nan),
        ("b", "d"): (0.1, math.nan),
        ("c", "d"): (0.1, math.nan),
    }
    assert rank_sets(pairs, ["a", "b", "c", "d"]) == {"a": (1, 2), "b": (2, 4), "c": (2, 4), "d": (1, 4)}


def test_bonferroni_level_uses_the_family_size() -> None:
    pairs = {("a", "b"): (0.1, 0.02)}
    assert rank_sets(pairs, ["a", "b"]) == {"a": (1, 1), "b": (2, 2)}  # 0.02 < 0.05 / 1
    assert rank_sets(pairs, ["a", "b"], family_size=3) == {"a": (1, 2), "b": (1, 2)}  # 0.02 >= 0.05 / 3


@pytest.mark.parametrize("seed", range(30))
def test_sets_are_intervals_that_hold_the_observed_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    names = [f"m{k}" for k in range(int(rng.integers(2, 7)))]
    means = dict(zip(names, rng.random(len(names)), strict=True))
    pairs = {(a, b): (means[a] - means[b], float(rng.random() ** 4)) for a, b in combinations(names, 2)}
    sets = rank_sets(pairs, names)
    observed = {m: k + 1 for k, m in enumerate(sorted(names, key=lambda m: -means[m]))}
    for m in names:
        assert 1 <= sets[m][0] <= observed[m] <= sets[m][1] <= len(names)


@pytest.mark.parametrize("step", [0.2, 0.5])
def test_every_true_rank_is_covered_at_once_in_95_percent(step: float) -> None:
    """Four models `step` logits apart on issue 27's design: simultaneous coverage >= 95 %."""
    design = replace(Design(), n_questions=60, sigma_item=1.5, theta_diff=step)
    assert simulate_rank_sets(design, replications=500).share >= 0.95

"""The compact letter display: two models share a letter exactly when their pair is not significant."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from enade_bench.metrics.letters import compact_letters, letter_name, letter_sets, share_a_letter


@pytest.mark.parametrize("seed", range(200))
def test_share_a_letter_iff_pair_not_significant(seed: int) -> None:
    """Random decision matrices of 2-9 models (any pattern, transitive or not)."""
    rng = np.random.default_rng(seed)
    names = [f"m{k}" for k in range(int(rng.integers(2, 10)))]
    means = {m: float(v) for m, v in zip(names, rng.random(len(names)), strict=True)}
    density = rng.uniform(0.05, 0.95)
    significant = {pair for pair in combinations(names, 2) if rng.random() < density}
    letters = letter_sets(means, [p[::-1] if rng.random() < 0.5 else p for p in significant])
    assert all(letters[m] for m in names)  # every model has a letter
    for a, b in combinations(names, 2):
        assert share_a_letter(letters, a, b) == ((a, b) not in significant), (a, b, letters)


@pytest.mark.parametrize("seed", range(50))
def test_letters_are_named_by_accuracy(seed: int) -> None:
    """The best model has 'a'; a letter's name follows the best model holding it (a = best)."""
    rng = np.random.default_rng(1000 + seed)
    names = [f"m{k}" for k in range(int(rng.integers(2, 8)))]
    means = {m: float(v) for m, v in zip(names, rng.random(len(names)), strict=True)}
    significant = [pair for pair in combinations(names, 2) if rng.random() < 0.5]
    letters = letter_sets(means, significant)
    order = sorted(names, key=lambda m: -means[m])
    assert "a" in letters[order[0]]
    firsts = []  # position of the best model holding each letter, in letter order
    for name in sorted({x for v in letters.values() for x in v}, key=lambda x: (len(x), x)):
        firsts.append(min(order.index(m) for m in names if name in letters[m]))
    assert firsts == sorted(firsts)


def test_issue_example_equal_models_share_a_letter() -> None:
    """A 49.8 %, B 49.7 %, C 53.8 %, A-B p = 0.91: A and B share a letter (rank groups split them)."""
    means = {"A": 0.498, "B": 0.497, "C": 0.538}
    adjusted = {("A", "B"): 0.91, ("A", "C"): 0.06, ("B", "C"): 0.03}
    letters = compact_letters(means, [pair for pair, p in adjusted.items() if p < 0.05])
    assert letters == {"A": "ab", "B": "b", "C": "a"}


def test_nothing_significant_is_one_letter_and_everything_significant_is_one_each() -> None:
    means = {"x": 0.9, "y": 0.5, "z": 0.1}
    assert compact_letters(means, []) == {"x": "a", "y": "a", "z": "a"}
    assert compact_letters(means, list(combinations(means, 2))) == {"x": "a", "y": "b", "z": "c"}


def test_unknown_or_self_pairs_are_ignored() -> None:
    assert compact_letters({"x": 0.9, "y": 0.5}, [("x", "w"), ("y", "y")]) == {"x": "a", "y": "a"}


def test_many_letters_are_spaced_names() -> None:
    assert [letter_name(k) for k in (0, 25, 26, 51, 52)] == ["a", "z", "aa", "az", "ba"]
    names = [f"m{k:02d}" for k in range(30)]
    means = {m: -k for k, m in enumerate(names)}
    letters = compact_letters(means, list(combinations(names, 2)))
    assert letters["m00"] == "a" and letters["m26"] == "aa" and letters["m29"] == "ad"

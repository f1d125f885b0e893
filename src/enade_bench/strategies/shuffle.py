"""Seeded option shuffles, reproducible per (seed, question id, shuffle index)."""

from __future__ import annotations

import hashlib

import numpy as np


def _stable_int(text: str) -> int:
    """A 64-bit integer from ``text`` that is the same on every machine and run."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


def permutation_for(seed: int, question_id: str, n_options: int, shuffle_index: int = 0) -> list[int]:
    """Display order of the options for one shuffle.

    Returns ``perm`` such that the option shown at position ``i`` is the original
    option ``perm[i]``.  The generator is seeded with ``(seed, sha256(question_id),
    shuffle_index)``, so the permutation depends on nothing else (not on the order
    in which questions are run, nor on the other questions in the file).
    """
    rng = np.random.default_rng([seed & 0xFFFFFFFF, _stable_int(question_id), shuffle_index])
    return [int(i) for i in rng.permutation(n_options)]

r"""Groups with a guarantee: the compact letter display of pairwise decisions.

After the pairwise tests of one table are adjusted for multiplicity, each model gets one
or more letters such that **two models share a letter exactly when their pair is not
significant** (Piepho 2004).  The letters therefore inherit the family-wise guarantee
of the adjustment: with Holm at :math:`\alpha`, two models that do not differ share a
letter with probability at least :math:`1-\alpha`, whatever the other models do.  Rank
groups built from "the best and those not distinguishable from it" have no such
property and are not transitive (A ≈ B, B ≈ C, yet A ≠ C puts B in a group with only
one of them).

The **insert-and-absorb** algorithm (Piepho 2004, §2), as R's ``multcompView``:

1. start with one column (letter) holding every model;
2. for each significant pair :math:`(i, j)`, every column holding both is replaced by two
   copies, one without :math:`i` and one without :math:`j` (*insert*);
3. after each step, a column whose models are all in another column is dropped
   (*absorb*).

A pair that is not significant shares the first column and never stops sharing one
(only a column holding both members of a *significant* pair is split, and one of its
two copies keeps any other pair); a significant pair shares none after its own split.
The letters are then named by accuracy: the column holding the best model is ``a``, the
next column (by its best model) ``b``, and so on.

References
----------
.. [1] H.-P. Piepho, "An algorithm for a letter-based representation of all-pairwise
   comparisons", Journal of Computational and Graphical Statistics 13(2), 456–466, 2004.
.. [2] S. Graves, H.-P. Piepho and L. Selzer, ``multcompView``: Visualizations of
   paired comparisons, R package.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from string import ascii_lowercase

__all__ = ["compact_letters", "letter_name", "letter_sets", "share_a_letter"]


def letter_name(k: int) -> str:
    """The ``k``-th letter: ``a``…``z``, then ``aa``, ``ab``… (as spreadsheet columns).

    Examples
    --------
    >>> [letter_name(k) for k in (0, 25, 26, 27)]
    ['a', 'z', 'aa', 'ab']
    """
    name = ""
    k += 1
    while k:
        k, rest = divmod(k - 1, 26)
        name = ascii_lowercase[rest] + name
    return name


def _absorb(columns: list[frozenset[str]]) -> list[frozenset[str]]:
    unique = list(dict.fromkeys(columns))
    return [c for c in unique if not any(c < other for other in unique)]


def letter_sets(
    means: Mapping[str, float], significant: Iterable[tuple[str, str]]
) -> dict[str, tuple[str, ...]]:
    """Each model's letter names: two models share one exactly when their pair is not significant.

    Parameters
    ----------
    means
        Each model's score (orders the letters: ``a`` holds the best model).
    significant
        The pairs declared different (after the multiplicity adjustment), in either order.
        Pairs not listed, including pairs that could not be compared, are not significant.

    Returns
    -------
    dict of str to tuple of str
        The letters of each model, in alphabetical order.

    Examples
    --------
    >>> letter_sets({"A": 0.498, "B": 0.497, "C": 0.538}, [("B", "C")])
    {'A': ('a', 'b'), 'B': ('b',), 'C': ('a',)}
    """
    models = sorted(means, key=lambda m: (-means[m], m))
    columns = [frozenset(models)]
    for i, j in significant:
        if i not in means or j not in means or i == j:
            continue
        split: list[frozenset[str]] = []
        for column in columns:
            split += [column - {i}, column - {j}] if i in column and j in column else [column]
        columns = _absorb(split)
    rank = {m: k for k, m in enumerate(models)}
    columns.sort(key=lambda c: sorted(rank[m] for m in c))
    return {m: tuple(letter_name(k) for k, c in enumerate(columns) if m in c) for m in means}


def compact_letters(means: Mapping[str, float], significant: Iterable[tuple[str, str]]) -> dict[str, str]:
    """:func:`letter_sets` as text: ``"ab"`` (names separated by spaces beyond 26 letters).

    Examples
    --------
    >>> compact_letters({"A": 0.498, "B": 0.497, "C": 0.538}, [("B", "C")])
    {'A': 'ab', 'B': 'b', 'C': 'a'}
    """
    sets = letter_sets(means, significant)
    sep = " " if any(len(name) > 1 for names in sets.values() for name in names) else ""
    return {m: sep.join(names) for m, names in sets.items()}


def share_a_letter(letters: Mapping[str, tuple[str, ...]], a: str, b: str) -> bool:
    """Whether models ``a`` and ``b`` have a letter in common (``letters`` from :func:`letter_sets`).

    Examples
    --------
    >>> share_a_letter({"A": ("a", "b"), "B": ("b",), "C": ("a",)}, "B", "C")
    False
    """
    return bool(set(letters[a]) & set(letters[b]))

r"""Confidence sets for ranks: where each model stands, with a family-wise guarantee.

From the :math:`K` pairwise tests of one family, each at level :math:`\alpha/K`
(Bonferroni), a model :math:`i` is *surely below* :math:`j` when the pair is significant
at :math:`\alpha/K` and :math:`\bar d_{ji} > 0`.  Its rank set is

.. math::

    \Bigl[\,1 + \#\{j: j \text{ surely above } i\},\;
           m - \#\{j: j \text{ surely below } i\}\,\Bigr].

Because each pair's interval excludes 0 exactly when its p-value is below the level
(:mod:`enade_bench.metrics.paired`), the Bonferroni decisions are those of :math:`K`
simultaneous :math:`1-\alpha/K` intervals of the differences; with probability at least
:math:`1-\alpha` all of them cover, and then every "surely above" is true, so the true
rank of **every** model lies in its set at once (Hall & Miller 2009, §2; the
simultaneous-interval construction of Klein, Wright & Wieczorek 2020).  A pair that
could not be compared makes no decision, which only widens the sets.

References
----------
.. [1] P. Hall and H. Miller, "Using the bootstrap to quantify the authority of an
   empirical ranking", Annals of Statistics 37(6B), 3929–3959, 2009.
.. [2] M. Klein, T. Wright and J. Wieczorek, "A joint confidence region for an overall
   ranking of populations", JRSS C 69(3), 589–606, 2020.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

__all__ = ["rank_sets"]


def rank_sets(
    pairs: Mapping[tuple[str, str], tuple[float, float]],
    models: list[str],
    alpha: float = 0.05,
    family_size: int | None = None,
) -> dict[str, tuple[int, int]]:
    """Each model's simultaneous ``1 - alpha`` rank set ``(best, worst)``; rank 1 is the highest score.

    Parameters
    ----------
    pairs
        ``(a, b) -> (diff, p)``: the difference ``a - b`` and its raw two-sided p-value
        (NaN when not comparable); the family is these pairs.
    models
        Every model of the ranking (a model in no pair ranks anywhere from 1 to m).
    alpha
        Family-wise level; each pair is decided at ``alpha / K``.
    family_size
        ``K``: the comparable pairs of the whole family when it spans more than these
        pairs (the sets of every ranking of the family then hold together); default: the
        comparable pairs given.

    Returns
    -------
    dict of str to (int, int)

    Examples
    --------
    >>> rank_sets({("a", "b"): (0.2, 0.001), ("a", "c"): (0.3, 0.0001), ("b", "c"): (0.01, 0.6)}, ["a", "b", "c"])
    {'a': (1, 1), 'b': (2, 3), 'c': (2, 3)}
    """
    k = family_size if family_size is not None else sum(1 for _, p in pairs.values() if not math.isnan(p))
    level = alpha / k if k else 0.0
    above = {m: 0 for m in models}
    below = {m: 0 for m in models}
    for (a, b), (diff, p) in pairs.items():
        if math.isnan(p) or p >= level or diff == 0:
            continue
        winner, loser = (a, b) if diff > 0 else (b, a)
        above[loser] += 1
        below[winner] += 1
    m = len(models)
    return {x: (1 + above[x], m - below[x]) for x in models}

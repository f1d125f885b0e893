"""The actual size of a test of two paired proportions: the check behind the exact test's choice.

Enumerating every table of ``n`` questions, the largest probability over the discordance
that a test rejects a true :math:`\\delta = 0` (``docs/comparisons.md`` quotes it for the
score test and the exact unconditional test of :mod:`enade_bench.metrics.paired_exact`;
``tests/metrics/test_paired_exact.py`` checks both). Run from the repository root with
``PYTHONPATH=.:src``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from enade_bench.metrics.paired_exact import _nuisance, _pmf, exact_pvalues


def actual_size(n: int, alpha: float, reject: npt.NDArray[np.bool_] | None = None, grid: int = 5001) -> float:
    """The largest probability of rejecting a true :math:`\\delta = 0`, over the discordance.

    Parameters
    ----------
    n
        Questions compared.
    alpha
        The test's level.
    reject
        Which tables of :func:`~enade_bench.metrics.paired_exact.tables` the test rejects; default: the exact unconditional
        test's (``exact_pvalues(n) < alpha``).
    grid
        Points of the grid over :math:`q` (finer than the test's own).

    Returns
    -------
    float
        :math:`\\max_q \\sum_{\\text{rejected}} P_q(b, c)`.
    """
    rows = exact_pvalues(n) < alpha if reject is None else reject
    if not np.any(rows):
        return 0.0
    return float(_pmf(rows, n, 0.0, _nuisance(0.0, grid)).sum(axis=0).max())

"""The pairs of one table of θ samples, adjusted together (what the tests compare against)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np

from enade_bench.psychometrics.theta_compare import (
    Pairing,
    ThetaDifference,
    ThetaSample,
    adjust_theta_pairs,
    theta_difference,
)


def theta_pairs(
    samples: Sequence[ThetaSample],
    pairing: Pairing = "independent",
    adjust: str = "holm",
    confidence: float = 0.95,
) -> list[ThetaDifference]:
    """Every pair of ``samples`` (higher mean θ first), adjusted together: one inference per pair.

    The p-values are adjusted over the pairs (``holm``, ``bonferroni`` or ``bh``); each
    pair's shown statement ``ci_low``–``ci_high`` is the adjustment's simultaneous one
    (:func:`enade_bench.metrics.simultaneous.shown_statements`; module docstring), so it
    excludes 0 exactly when ``different`` (adjusted p below :math:`\alpha = 1 -`
    ``confidence``); the unadjusted interval stays in ``ci_low_unadjusted``–``ci_high_unadjusted``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> pairs = theta_pairs([ThetaSample.of(n, rng.normal(mu, 0.3, 10)) for n, mu in (("x", 0), ("y", 0.5))])
    >>> p = pairs[0]
    >>> from enade_bench.metrics.simultaneous import holds_zero
    >>> p.different == (not holds_zero(p.statement, p.ci_low, p.ci_high)) == (p.p_adjusted < 0.05)
    True
    """
    ordered = sorted(samples, key=lambda s: -float(np.mean(s.theta)))
    pairs = [theta_difference(x, y, pairing, confidence) for x, y in combinations(ordered, 2)]
    return adjust_theta_pairs(pairs, adjust, confidence)

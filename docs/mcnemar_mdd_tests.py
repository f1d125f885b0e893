"""The 80 % MDD of four tests of paired proportions on few questions, exact power under the same alternative.

``python docs/mcnemar_mdd_tests.py [N] [ALPHA]`` (default 8 questions, alpha 0.05) prints, for
each observed share of questions the weaker model wins, the smallest difference (grid of 0.001) that the score test (the one
enade-bench uses above 100 questions), the mid-p test and the exact conditional test detect with
80 % power, and, beside them, the exact unconditional score test's (the one enade-bench uses up
to 100 questions: :func:`enade_bench.metrics.power.exact_mdd`, grid and bisection).  The
alternative is :mod:`enade_bench.metrics.power`'s: the weaker model's wins kept,
``p01 = min(observed, (1 - delta) / 2)``, ``p10 = p01 + delta``, the discordant count binomial, and
its split binomial (docs/comparisons.md, "Minimum detectable
difference").
"""

from __future__ import annotations

import sys
from statistics import NormalDist

import numpy as np
from scipy import stats


def rejects(test: str, b: int, k: int, alpha: float) -> bool:
    """Whether ``test`` rejects with ``b`` of ``k`` discordant questions for A."""
    if k == 0:
        return False
    low = min(b, k - b)
    if test == "score":
        return abs(2 * b - k) > NormalDist().inv_cdf(1 - alpha / 2) * k**0.5
    if test == "mid-p":
        return min(1.0, 2 * (stats.binom.cdf(low - 1, k, 0.5) + 0.5 * stats.binom.pmf(low, k, 0.5))) < alpha
    return min(1.0, 2 * stats.binom.cdf(low, k, 0.5)) < alpha  # exact conditional, two-sided


def power(test: str, delta: float, n: int, observed: float, alpha: float) -> float:
    p01 = min(observed, (1 - delta) / 2)
    psi = 2 * p01 + delta
    share = (p01 + delta) / psi
    return sum(
        stats.binom.pmf(k, n, psi)
        * sum(stats.binom.pmf(b, k, share) for b in range(k + 1) if rejects(test, b, k, alpha))
        for k in range(1, n + 1)
    )


def mdd(test: str, n: int, observed: float, alpha: float) -> float:
    for delta in np.arange(0.001, 1.0005, 0.001):
        if power(test, float(delta), n, observed, alpha) >= 0.8:
            return float(delta)
    return float("inf")


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    alpha = float(sys.argv[2]) if len(sys.argv) > 2 else 0.05
    print(f"{n} questions, alpha {alpha}: MDD 80 % (points)")
    from enade_bench.metrics.power import exact_mdd

    print("weaker model's wins | score | mid-p | exact conditional | exact unconditional (score)")
    for observed in (0.0, 0.125, 0.25):
        print(
            f"{observed:.2f} | "
            + " | ".join(f"{100 * mdd(t, n, observed, alpha):.1f}" for t in ("score", "mid-p", "exact"))
            + f" | {100 * exact_mdd(n, observed, alpha):.1f}"
        )

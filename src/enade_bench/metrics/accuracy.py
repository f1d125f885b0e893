"""Accuracy and its confidence interval, overall and per subgroup."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from scipy import stats

from enade_bench.results.records import QuestionRecord


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    .. math::
        \\frac{\\hat p + \\frac{z^2}{2n} \\pm z\\sqrt{\\frac{\\hat p(1-\\hat p)}{n}
        + \\frac{z^2}{4n^2}}}{1 + \\frac{z^2}{n}}

    with :math:`z = \\Phi^{-1}(1 - \\alpha/2)`.  Unlike the Wald interval it stays
    inside [0, 1] and behaves at 0 % and 100 % accuracy.

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and
    statistical inference. *JASA* 22(158), 209–212.  Matches R's
    ``prop.test(x, n, correct = FALSE)$conf.int``.

    Examples
    --------
    >>> [round(v, 4) for v in wilson_interval(7, 10)]
    [0.3968, 0.8922]
    """
    if n == 0:
        return (math.nan, math.nan)
    z = float(stats.norm.ppf(1 - (1 - confidence) / 2))
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)


def _accuracy_block(records: Sequence[QuestionRecord]) -> dict[str, Any]:
    n = len(records)
    correct = sum(r.correct for r in records)
    low, high = wilson_interval(correct, n)
    return {
        "n": n,
        "correct": correct,
        "accuracy": correct / n if n else math.nan,
        "ci95": [low, high],
    }


def summarize(records: Sequence[QuestionRecord]) -> dict[str, Any]:
    """Totals: accuracy with a 95 % Wilson interval, unanswered, errors, extraction shares.

    With several shuffles per question, ``per_shuffle`` adds the accuracy of each
    shuffle, their mean and the 2.5–97.5 percentile interval (records of one
    question are not independent, so the pooled Wilson interval is too narrow).
    """
    block = _accuracy_block(records)
    n = len(records)
    rules = Counter(r.extraction_rule for r in records if r.extraction_rule is not None)
    block["unanswered"] = sum(r.prediction is None and r.error is None for r in records)
    block["errors"] = sum(r.error is not None for r in records)
    block["n_questions"] = len({r.id for r in records})
    if rules:
        block["extraction"] = {
            rule: {"count": count, "share": count / n} for rule, count in sorted(rules.items())
        }
    shuffles = sorted({r.shuffle for r in records})
    if len(shuffles) > 1:
        by_shuffle: dict[int, list[bool]] = defaultdict(list)
        for r in records:
            by_shuffle[r.shuffle].append(r.correct)
        accs = np.array([np.mean(by_shuffle[s]) for s in shuffles])
        block["per_shuffle"] = {
            "n_shuffles": len(shuffles),
            "accuracy": [float(a) for a in accs],
            "mean": float(accs.mean()),
            "interval95": [float(np.percentile(accs, 2.5)), float(np.percentile(accs, 97.5))],
        }
    return block


def breakdown(
    records: Iterable[QuestionRecord], key: Callable[[QuestionRecord], Any]
) -> dict[str, dict[str, Any]]:
    """Accuracy (with Wilson interval) per value of ``key``, sorted by value."""
    groups: dict[str, list[QuestionRecord]] = defaultdict(list)
    for r in records:
        groups[str(key(r))].append(r)
    return {value: _accuracy_block(groups[value]) for value in sorted(groups)}

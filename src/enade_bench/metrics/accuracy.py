"""Accuracy and its confidence interval, overall and per subgroup."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from statistics import NormalDist

import numpy as np

from enade_bench.results.records import QuestionRecord
from enade_bench.results.summary import AccuracyCell, ExtractionShare, PerShuffle, Totals


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
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)  # stdlib: scipy.stats takes ~1 s to import
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)


def scored(records: Iterable[QuestionRecord]) -> list[QuestionRecord]:
    """The records that count in an accuracy: every one but those that ended in an error.

    An error (HTTP 401, a timeout, a malformed reply) is not an answer: it is neither right
    nor wrong, so it is left out of ``n`` and counted apart as ``n_errors``.  A question
    the model answered with no letter (unanswered) is scored, as wrong.
    """
    return [r for r in records if r.error is None]


def accuracy_cell(records: Sequence[QuestionRecord]) -> AccuracyCell:
    """Accuracy of ``records`` with its 95 % Wilson interval (:func:`wilson_interval`).

    Records in error are left out (:func:`scored`) and counted in ``n_errors``.
    """
    kept = scored(records)
    n = len(kept)
    correct = sum(r.correct for r in kept)
    return AccuracyCell(
        n=n,
        correct=correct,
        accuracy=correct / n if n else math.nan,
        ci95=wilson_interval(correct, n),
        n_errors=len(records) - n,
    )


def summarize(records: Sequence[QuestionRecord]) -> Totals:
    """Totals: accuracy with a 95 % Wilson interval, unanswered, errors, extraction shares.

    With several shuffles per question, ``per_shuffle`` adds the accuracy of each
    shuffle, their mean and the 2.5–97.5 percentile interval (records of one
    question are not independent, so the pooled Wilson interval is too narrow).
    Records in error count in ``errors`` (and ``n_errors``) and in nothing else.
    """
    kept = scored(records)
    n = len(kept)
    rules = Counter(r.extraction_rule for r in kept if r.extraction_rule is not None)
    extraction = None
    if rules:
        extraction = {
            rule: ExtractionShare(count=count, share=count / n) for rule, count in sorted(rules.items())
        }
    per_shuffle = None
    shuffles = sorted({r.shuffle for r in kept})
    if len(shuffles) > 1:
        by_shuffle: dict[int, list[bool]] = defaultdict(list)
        for r in kept:
            by_shuffle[r.shuffle].append(r.correct)
        accs = np.array([np.mean(by_shuffle[s]) for s in shuffles])
        per_shuffle = PerShuffle(
            n_shuffles=len(shuffles),
            accuracy=[float(a) for a in accs],
            mean=float(accs.mean()),
            interval95=(float(np.percentile(accs, 2.5)), float(np.percentile(accs, 97.5))),
        )
    return Totals(
        **accuracy_cell(records).model_dump(),
        unanswered=sum(r.prediction is None and r.error is None for r in records),
        errors=sum(r.error is not None for r in records),
        n_questions=len({r.id for r in records}),
        extraction=extraction,
        per_shuffle=per_shuffle,
    )


#: The group of the records whose value is empty (an empty cell, or no value): named, counted, last.
EMPTY = "(empty)"


def is_blank(value: object) -> bool:
    """Whether a grouping value is empty: ``None`` or blank text (its group is :data:`EMPTY`)."""
    return value is None or not str(value).strip()


def group_label(value: object) -> str:
    """The breakdown group of a value: its text, or :data:`EMPTY` for ``None`` and blank text."""
    return EMPTY if is_blank(value) else str(value)


def breakdown(
    records: Iterable[QuestionRecord], key: Callable[[QuestionRecord], object]
) -> dict[str, AccuracyCell]:
    """Accuracy (with Wilson interval) per value of ``key``, sorted by value; empty values last as ``(empty)``."""
    groups: dict[str, list[QuestionRecord]] = defaultdict(list)
    for r in records:
        groups[group_label(key(r))].append(r)
    return {value: accuracy_cell(groups[value]) for value in sorted(groups, key=lambda v: (v == EMPTY, v))}


def field_breakdowns(
    records: Sequence[QuestionRecord], fields: Iterable[str]
) -> dict[str, dict[str, AccuracyCell]]:
    """:func:`breakdown` by each named grouping field of the records (a missing one is ``(empty)``);
    ``n_options``: by the number of options."""

    def by(name: str) -> Callable[[QuestionRecord], object]:
        return (lambda r: r.n_options) if name == "n_options" else (lambda r: r.fields.get(name))

    return {name: breakdown(records, by(name)) for name in fields}

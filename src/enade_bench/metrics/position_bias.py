"""Position bias (BPC): does the model favour an option *position* regardless of content?

For the items with :math:`k` options (4 and 5 are reported separately), let
:math:`n_i` be the number of answered predictions at display position
:math:`i` and :math:`N = \\sum_i n_i`.  We report

* the shares :math:`\\hat p_i = n_i / N` (and, for comparison, the shares of the
  correct answer's position, which shuffling makes close to uniform);
* the total-variation distance from uniform,
  :math:`\\mathrm{BPC} = \\tfrac12 \\sum_{i=1}^{k} |\\hat p_i - 1/k|`, from 0 (no
  preference) to :math:`1 - 1/k` (always the same position);
* Pearson's chi-square goodness-of-fit test of :math:`H_0: p_i = 1/k`,
  :math:`X^2 = \\sum_i (n_i - N/k)^2 / (N/k)` with :math:`k-1` degrees of freedom
  (``scipy.stats.chisquare``, as R's ``chisq.test(n)``).

Measured on a shuffled run (S4), where the correct answer is spread over the
positions, a large BPC means the model's choice depends on the position.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from enade_bench.dataset.schema import LETTERS
from enade_bench.results.records import QuestionRecord
from enade_bench.results.summary import PositionBias, PositionBiasStratum


def total_variation_from_uniform(counts: Sequence[int] | np.ndarray) -> float:
    """:math:`\\tfrac12 \\sum_i |n_i/N - 1/k|` (``nan`` when ``N = 0``).

    Examples
    --------
    >>> total_variation_from_uniform([10, 0, 0, 0])
    0.75
    """
    arr = np.asarray(counts, dtype=float)
    total = arr.sum()
    if total == 0:
        return float("nan")
    return float(0.5 * np.abs(arr / total - 1 / len(arr)).sum())


def position_bias(records: Sequence[QuestionRecord]) -> PositionBias:
    """BPC per number of options (``"4"``, ``"5"``…), from answered predictions."""
    strata: dict[int, list[QuestionRecord]] = defaultdict(list)
    for r in records:
        strata[r.n_options].append(r)
    out: PositionBias = {}
    for k in sorted(strata):
        group = strata[k]
        predicted = np.zeros(k, dtype=int)
        keyed = np.zeros(k, dtype=int)
        for r in group:
            keyed[r.answer_position] += 1
            if r.predicted_position is not None:
                predicted[r.predicted_position] += 1
        n_answered = int(predicted.sum())
        if n_answered and k > 1:
            from scipy import stats  # noqa: PLC0415 (slow import; only the test needs it)

            test = stats.chisquare(predicted)
            chi2, p_value = float(test.statistic), float(test.pvalue)
        else:
            chi2, p_value = float("nan"), float("nan")
        out[str(k)] = PositionBiasStratum(
            n=len(group),
            n_answered=n_answered,
            positions=list(LETTERS[:k]),
            prediction_counts=predicted.tolist(),
            prediction_shares=(predicted / n_answered).tolist() if n_answered else None,
            answer_shares=(keyed / len(group)).tolist(),
            bpc_tvd=total_variation_from_uniform(predicted),
            chi2=chi2,
            df=k - 1,
            p_value=p_value,
        )
    return out

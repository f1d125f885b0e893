"""Min-K% Prob, a pre-training data detection score, and its link to accuracy.

References
----------
Shi, W., Ajith, A., Xia, M., Huang, Y., Liu, D., Blevins, T., Chen, D., &
Zettlemoyer, L. (2024). Detecting pretraining data from large language
models. *ICLR 2024*. arXiv:2310.16789.

Pearson, K. (1895). Notes on regression and inheritance in the case of two
parents. *Proceedings of the Royal Society of London*, 58, 240-242.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats


def min_k_prob(token_logprobs: ArrayLike, k: float = 20.0) -> float:
    r"""Min-K% Prob of one text from its per-token log-probabilities.

    .. math:: \text{Min-K\%}(x) = \frac{1}{|S|}\sum_{x_i \in S} \log p(x_i \mid x_{<i})

    where :math:`S` holds the :math:`\max(1, \lfloor |x| K/100 \rfloor)`
    tokens of lowest log-probability. Higher (closer to 0) values suggest the
    text was seen in pre-training. (Shi et al.'s code reports the negated
    value; this is the paper's definition.)

    Parameters
    ----------
    token_logprobs : array_like
        Natural-log probabilities of the text's tokens (each ≤ 0); the first
        token, which has no context, is usually left out by the caller.
    k : float
        Percentage of tokens kept (default 20, as in the paper).

    Raises
    ------
    ValueError
        On an empty input, a non-finite or positive log-probability, or
        ``k`` outside (0, 100].

    References
    ----------
    Shi et al. (2024), section 3.
    """
    values = np.asarray(token_logprobs, dtype=np.float64).reshape(-1)
    if values.size == 0:
        raise ValueError("Min-K% Prob needs at least one token log-probability")
    if not np.isfinite(values).all() or (values > 1e-9).any():
        raise ValueError("token log-probabilities must be finite and <= 0")
    if not 0 < k <= 100:
        raise ValueError(f"k must be in (0, 100]; got {k}")
    count = max(1, int(np.floor(values.size * k / 100.0)))
    return float(np.sort(values)[:count].mean())


@dataclass(frozen=True)
class Correlation:
    """Pearson correlation across items."""

    r: float
    p_value: float
    n_items: int


def mink_accuracy_correlation(frame: pd.DataFrame) -> Correlation:
    r"""Pearson r between an item's Min-K% Prob and its accuracy across shuffles.

    Per item, Min-K% is averaged over shuffles (the option order changes the
    text) and accuracy is the share of shuffles answered correctly; then

    .. math:: r = \frac{\sum_j (m_j - \bar m)(a_j - \bar a)}
                       {\sqrt{\sum_j (m_j - \bar m)^2 \sum_j (a_j - \bar a)^2}}

    with the two-sided p-value of :math:`t = r\sqrt{(n-2)/(1-r^2)}` on
    :math:`n - 2` df. A positive r (better on "familiar" items) is a
    contamination signal.

    Parameters
    ----------
    frame : DataFrame
        Columns ``item_id``, ``mink`` and ``correct`` (one row per item ×
        shuffle, one respondent).

    Returns
    -------
    Correlation
        NaN r and p when fewer than 3 items or a constant column.
    """
    missing = {"item_id", "mink", "correct"} - set(frame.columns)
    if missing:
        raise ValueError(f"frame lacks column(s) {sorted(missing)}")
    per_item = frame.groupby("item_id")[["mink", "correct"]].mean()
    n = len(per_item)
    m, a = per_item["mink"].to_numpy(float), per_item["correct"].to_numpy(float)
    if n < 3 or np.ptp(m) == 0 or np.ptp(a) == 0:
        return Correlation(np.nan, np.nan, n)
    res = stats.pearsonr(m, a)
    return Correlation(float(res.statistic), float(res.pvalue), n)

"""Choose an answer from per-option scores (log-probabilities).

``log_prob`` (S5/S6): for option :math:`o_j` with tokens :math:`t_1..t_{n_j}` after
the context :math:`c`, the score is the mean token log-probability

.. math:: s_j = \\frac{1}{n_j} \\sum_{k=1}^{n_j} \\log p(t_k \\mid c, t_{<k})

(length-normalised so long options are not penalised).  The sum and the
token count are kept too, so other normalisations (e.g. the unconditional
"domain-conditional PMI" of Holtzman et al. 2021) can be computed later.

``first_token``: :math:`p(\\ell \\mid c)` for each valid letter :math:`\\ell`,
renormalised over the valid letters,

.. math:: q_\\ell = \\frac{p(\\ell \\mid c)}{\\sum_{m \\in \\text{valid}} p(m \\mid c)} .
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from enade_bench.dataset.schema import LETTERS


@dataclass(frozen=True)
class OptionScores:
    """Per-option scores and the chosen letter (in display order)."""

    letter: str
    scores: dict[str, float]
    details: dict[str, dict[str, float]]


def choose_log_prob(sums: Sequence[float], counts: Sequence[int]) -> OptionScores:
    """Pick the option with the highest mean token log-probability.

    Ties are broken by the earliest option (deterministic).

    Examples
    --------
    >>> choose_log_prob([-6.0, -3.0], [3, 1]).letter
    'A'
    """
    if len(sums) != len(counts) or not sums:
        raise ValueError("need one (sum, count) per option")
    means = [s / c if c > 0 else -math.inf for s, c in zip(sums, counts, strict=True)]
    best = max(range(len(means)), key=lambda i: (means[i], -i))
    letters = LETTERS[: len(means)]
    return OptionScores(
        letter=letters[best],
        scores={letters[i]: means[i] for i in range(len(means))},
        details={
            letters[i]: {"sum_logprob": sums[i], "n_tokens": float(counts[i])} for i in range(len(means))
        },
    )


def choose_first_token(letter_logprobs: Sequence[float]) -> OptionScores:
    """Renormalise next-token log-probabilities of the valid letters and pick the largest.

    Examples
    --------
    >>> r = choose_first_token([math.log(0.2), math.log(0.6)])
    >>> r.letter, round(r.scores["B"], 3)
    ('B', 0.75)
    """
    if not letter_logprobs:
        raise ValueError("need at least one letter")
    top = max(letter_logprobs)
    weights = [math.exp(lp - top) for lp in letter_logprobs]
    total = sum(weights)
    probs = [w / total for w in weights]
    best = max(range(len(probs)), key=lambda i: (probs[i], -i))
    letters = LETTERS[: len(probs)]
    return OptionScores(
        letter=letters[best],
        scores={letters[i]: probs[i] for i in range(len(probs))},
        details={letters[i]: {"logprob": letter_logprobs[i]} for i in range(len(probs))},
    )

r"""Letter-prior correction of shuffled runs (PriDe, Zheng et al. 2024).

A model that prefers an option *letter* whatever the content shows it on a
shuffled run: the same content lands on different letters, the preference
stays. Zheng et al. decompose the observed probability of the option shown
at display letter :math:`d_i` as

.. math:: P_{obs}(d_i \mid q, x) = Z^{-1}\, P_{prior}(d_i)\, P_{debiased}(o_i \mid q, x),

estimate the prior from permutations of the same question (the content
averages out; the letter preference does not), as the normalised geometric
mean over the :math:`K` observed orders of question :math:`q`

.. math:: \log \hat P_{prior}(d \mid q) = \frac1K \sum_{k=1}^{K} \log P_{obs}(d \mid q, x^{(k)}) + C,
          \qquad \hat P_{prior}(d) = \frac{1}{|Q|} \sum_{q} \hat P_{prior}(d \mid q),

and score each record with the prior removed,

.. math:: \hat P_{debiased}(o_i) \propto P_{obs}(d_i) / \hat P_{prior}(d_i),
          \qquad \text{prediction} = \arg\max_i \hat P_{debiased}(o_i).

Zheng et al. estimate :math:`\hat P_{prior}(d \mid q)` with cyclic
permutations of a small share of the test questions and carry the mean to
the rest; a shuffled run already holds :math:`K` random orders of *every*
question, so each record can be corrected with its own question's prior
(``scope="question"``, default) or with the model's mean prior
(``scope="model"``).

Letter probabilities per record, in display order: ``first_token`` records
store the renormalised letter probabilities in ``option_scores``;
``log_prob`` records store mean token log-probabilities, turned into
probabilities by a softmax over the options. ``option_scores`` is keyed by
the item's *original* letters; ``permutation[i]`` is the original option
shown at display position ``i``, so display position ``i`` has probability
``option_scores[LETTERS[permutation[i]]]``. No new record field is needed.

References
----------
Zheng, C., Zhou, H., Meng, F., Zhou, J., & Huang, M. (2024). Large language
models are not robust multiple choice selectors. *ICLR 2024*. arXiv:2309.03882.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from enade_bench.dataset.schema import LETTERS
from enade_bench.metrics.position_bias import position_bias
from enade_bench.results.records import QuestionRecord
from enade_bench.results.summary import PositionBias

SCORED_METHODS = ("first_token", "log_prob")
Scope = Literal["question", "model"]


def display_probabilities(record: QuestionRecord) -> np.ndarray | None:
    """Probabilities of the display letters A, B, … of one record (None without scores)."""
    scores = record.option_scores
    if not scores or record.method not in SCORED_METHODS:
        return None
    perm = record.permutation or list(range(record.n_options))
    values = np.array([scores.get(LETTERS[perm[i]], np.nan) for i in range(record.n_options)], dtype=float)
    if np.isnan(values).any():
        return None
    if record.method == "log_prob":
        values = np.exp(values - values.max())
    total = values.sum()
    return values / total if total > 0 else None


@dataclass(frozen=True)
class PriorCorrection:
    """Raw and prior-corrected predictions of one model's shuffled run.

    Attributes
    ----------
    scope : str
        ``"question"`` or ``"model"`` (see :func:`prior_correction`).
    prior : dict
        Number of options → the model's estimated prior over the display letters.
    n_questions : dict
        Number of options → questions used for the prior.
    records : list of QuestionRecord
        Copies of the input records with the corrected prediction
        (``prediction``, ``displayed_prediction``, ``predicted_position``,
        ``correct``); ``extra["raw"]`` keeps the raw ones. Records without
        letter scores are copied unchanged.
    raw_accuracy, corrected_accuracy : float
        Share correct over the records.
    bpc_raw, bpc_corrected : PositionBias
        :func:`~enade_bench.metrics.position_bias.position_bias` before and after.
    """

    scope: str
    prior: dict[int, list[float]]
    n_questions: dict[int, int]
    records: list[QuestionRecord]
    raw_accuracy: float
    corrected_accuracy: float
    bpc_raw: PositionBias
    bpc_corrected: PositionBias


def question_priors(records: Sequence[QuestionRecord], min_shuffles: int = 2) -> dict[str, np.ndarray]:
    r"""Per-question letter prior :math:`\hat P_{prior}(d \mid q)`: normalised geometric mean over its orders.

    Questions seen in fewer than ``min_shuffles`` orders are skipped (their
    content does not average out).
    """
    by_question: dict[str, list[np.ndarray]] = defaultdict(list)
    for r in records:
        probs = display_probabilities(r)
        if probs is not None:
            by_question[r.id].append(probs)
    out: dict[str, np.ndarray] = {}
    for qid, rows in by_question.items():
        if len(rows) < min_shuffles or len({len(x) for x in rows}) != 1:
            continue
        log_mean = np.log(np.clip(np.array(rows), 1e-300, None)).mean(axis=0)
        q_prior = np.exp(log_mean - log_mean.max())
        out[qid] = q_prior / q_prior.sum()
    return out


def estimate_prior(
    records: Sequence[QuestionRecord], min_shuffles: int = 2
) -> tuple[dict[int, np.ndarray], dict[int, int]]:
    r"""The model's letter prior per number of options: the mean of :func:`question_priors`."""
    per_k: dict[int, list[np.ndarray]] = defaultdict(list)
    for prior in question_priors(records, min_shuffles).values():
        per_k[len(prior)].append(prior)
    priors = {k: np.mean(v, axis=0) for k, v in per_k.items()}
    return priors, {k: len(v) for k, v in per_k.items()}


def correct_record(record: QuestionRecord, prior: np.ndarray) -> QuestionRecord:
    """A copy of ``record`` predicted by :math:`\\arg\\max_i P_{obs}(d_i)/P_{prior}(d_i)`."""
    probs = display_probabilities(record)
    if probs is None:
        return record
    position = int(np.argmax(probs / prior))
    displayed = LETTERS[position]
    perm = record.permutation
    prediction = LETTERS[perm[position]] if perm else displayed
    raw = {
        "prediction": record.prediction,
        "displayed_prediction": record.displayed_prediction,
        "predicted_position": record.predicted_position,
        "correct": record.correct,
    }
    return record.model_copy(
        update={
            "prediction": prediction,
            "displayed_prediction": displayed,
            "predicted_position": position,
            "correct": prediction == record.answer,
            "extra": {**(record.extra or {}), "raw": raw, "prior_corrected": True},
        }
    )


def prior_correction(
    records: Sequence[QuestionRecord], scope: Scope = "question", min_shuffles: int = 2
) -> PriorCorrection:
    r"""Estimate one model's letter prior from its shuffled records and rescore them.

    Parameters
    ----------
    records : sequence of QuestionRecord
        The records of ONE model and one shuffled run (``first_token`` or
        ``log_prob``; other records are passed through unchanged).
    scope : {"question", "model"}
        ``"question"`` (default): each record is corrected with its own
        question's prior :math:`\hat P_{prior}(d \mid q)` (the sample-specific
        estimate of Zheng et al., available for every question of a shuffled
        run); ``"model"``: with the model's prior, the mean over questions
        (their transferable estimate). Questions without their own prior fall
        back to the model's.
    min_shuffles : int
        Orders a question needs to enter the prior.

    Returns
    -------
    PriorCorrection

    Raises
    ------
    ValueError
        If no question has letter scores in ``min_shuffles`` orders.
    """
    priors, counts = estimate_prior(records, min_shuffles)
    if not priors:
        raise ValueError(
            f"no question has letter scores in at least {min_shuffles} option orders "
            "(needs a shuffled first_token or log_prob run)"
        )
    own = question_priors(records, min_shuffles) if scope == "question" else {}
    corrected = []
    for r in records:
        prior = own.get(r.id, priors.get(r.n_options))
        corrected.append(r if prior is None or len(prior) != r.n_options else correct_record(r, prior))
    n = max(len(records), 1)
    return PriorCorrection(
        scope=scope,
        prior={k: [float(v) for v in p] for k, p in priors.items()},
        n_questions=counts,
        records=corrected,
        raw_accuracy=sum(r.correct for r in records) / n,
        corrected_accuracy=sum(r.correct for r in corrected) / n,
        bpc_raw=position_bias(records),
        bpc_corrected=position_bias(corrected),
    )

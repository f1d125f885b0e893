r"""How often the paired tests reject: a simulation of clustered exam data.

Each replication draws an exam of ``n_questions`` questions in stimulus clusters of
2–4 (the layout is drawn once), and two models.  Model :math:`m` answers question
:math:`q` of cluster :math:`g` right with probability

.. math::

    \operatorname{logit} p_{mq} = \theta_m - b_q + u_{mg} + v_{mq},\qquad
    b_q \sim N(0, 1),\; u_{mg} \sim N(0, \sigma_g^2),\; v_{mq} \sim N(0, \sigma_q^2),

and each of its ``n_shuffles`` shuffles is a Bernoulli draw with that probability: a
model knows a question (or a stimulus) or not, and the shuffles repeat the
measurement.  With :math:`\theta_A = \theta_B` every rejection is a false positive.
The clustered paired t test (:func:`~enade_bench.metrics.paired.paired_difference`)
is compared with the naive pooled test, a two-proportion z test on all records as if
each were an independent question.  ``enade-bench compare --calibration`` prints the
table quoted in ``docs/comparisons.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["CalibrationRow", "simulate_rejections"]


@dataclass(frozen=True)
class CalibrationRow:
    """Rejection rates at ``alpha`` for one planted difference (``theta_diff``)."""

    theta_diff: float
    n_questions: int
    n_shuffles: int
    replications: int
    clustered: float
    naive: float
    mean_accuracy_diff: float


def _cluster_layout(n_questions: int, rng: np.random.Generator) -> npt.NDArray[np.int64]:
    sizes: list[int] = []
    while sum(sizes) < n_questions:
        sizes.append(int(rng.integers(2, 5)))
    return np.repeat(np.arange(len(sizes)), sizes)[:n_questions]


def simulate_rejections(
    theta_diff: float = 0.0,
    n_questions: int = 100,
    n_shuffles: int = 30,
    replications: int = 2000,
    alpha: float = 0.05,
    seed: int = 20241124,
    sigma_cluster: float = 0.5,
    sigma_question: float = 1.0,
) -> CalibrationRow:
    """Share of replications in which each test rejects at ``alpha`` (module docstring)."""
    from scipy import stats  # noqa: PLC0415 (slow import)

    rng = np.random.default_rng(seed)
    cluster = _cluster_layout(n_questions, rng)
    groups = int(cluster.max()) + 1
    onehot = np.eye(groups)[cluster]  # questions × clusters
    shape = (replications, n_questions)
    b = rng.normal(0.0, 1.0, shape)
    scores = []
    for theta in (theta_diff / 2, -theta_diff / 2):
        u = rng.normal(0.0, sigma_cluster, (replications, groups)) @ onehot.T
        v = rng.normal(0.0, sigma_question, shape)
        p = 1 / (1 + np.exp(-(theta - b + u + v)))
        scores.append(rng.binomial(n_shuffles, p) / n_shuffles)
    d = scores[0] - scores[1]
    centred = d - d.mean(axis=1, keepdims=True)
    sums = centred @ onehot
    se = np.sqrt(groups / (groups - 1) * np.sum(sums**2, axis=1) / n_questions**2)
    t = d.mean(axis=1) / np.where(se > 0, se, np.nan)
    clustered = 2 * stats.t.sf(np.abs(t), groups - 1) < alpha
    records = n_questions * n_shuffles
    pa, pb = scores[0].mean(axis=1), scores[1].mean(axis=1)
    pooled = (pa + pb) / 2
    z = (pa - pb) / np.sqrt(pooled * (1 - pooled) * 2 / records)
    naive = 2 * stats.norm.sf(np.abs(z)) < alpha
    return CalibrationRow(theta_diff, n_questions, n_shuffles, replications, float(np.mean(clustered)),
                          float(np.mean(naive)), float(np.mean(pa - pb)))  # fmt: skip

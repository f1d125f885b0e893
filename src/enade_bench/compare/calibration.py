r"""How often the paired tests and the letters err: a simulation of clustered exam data.

Each replication draws an exam of ``n_questions`` questions in stimulus clusters of
2–4 (the layout is drawn once), and the models.  Model :math:`m` answers question
:math:`q` of cluster :math:`g` right with probability

.. math::

    \operatorname{logit} p_{mq} = \theta_m - b_q + u_{mg} + v_{mq},\qquad
    b_q \sim N(0, \sigma_b^2),\; u_{mg} \sim N(0, \sigma_g^2),\; v_{mq} \sim N(0, \sigma_{mq}^2),

and each of its ``n_shuffles`` shuffles is a Bernoulli draw with that probability: a
model knows a question (or a stimulus) or not, and the shuffles repeat the
measurement.  :math:`v_{mq}` is the **model × item effect** (a model's own strengths,
beyond the question's difficulty); :math:`\sigma_{mq} = 0` removes it.  With
:math:`\theta_A = \theta_B` every rejection is a false positive; a small
:math:`\theta_A - \theta_B` (0.1 logit, about 1.5 points) is a near-null pair.

* :func:`simulate_rejections`: the clustered paired t test
  (:func:`~enade_bench.metrics.paired.paired_difference`, vectorised here) against the
  naive pooled test, a two-proportion z test on all records as if each were an
  independent question.
* :func:`simulate_letters`: three models, two of them equal, Holm over the three pairs
  and the compact letter display (:func:`~enade_bench.metrics.letters.letter_sets`); the
  share of replications in which the two equal models share a letter.

``enade-bench compare --calibration`` prints the table quoted in ``docs/comparisons.md``
(:func:`calibration_lines`).  Each rate is a Monte-Carlo estimate from ``replications``
independent exams, so it carries its own 95 % interval, Wilson's (1927) on the count of
replications (:meth:`CalibrationRow.interval`): a claim such as "the letters keep two
equal models together at least 95 % of the time" holds when that interval's lower limit
clears 0.95, which needs about 2,000 replications for a rate near 0.975 (Morris, White &
Crowther 2019, §5.2: Monte-Carlo standard errors belong beside every simulated rate).

References
----------
.. [1] T. P. Morris, I. R. White and M. J. Crowther, "Using simulation studies to evaluate
   statistical methods", Statistics in Medicine 38(11), 2074–2102, 2019.
.. [2] E. B. Wilson, "Probable inference, the law of succession, and statistical
   inference", JASA 22(158), 209–212, 1927.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from enade_bench.metrics.accuracy import wilson_interval
from enade_bench.metrics.letters import letter_sets, share_a_letter
from enade_bench.metrics.multiplicity import adjust_pvalues
from enade_bench.metrics.paired import SE_ZERO

__all__ = [
    "CalibrationRow",
    "Design",
    "LettersRow",
    "calibration_lines",
    "calibration_rows",
    "max_replications",
    "mc_interval",
    "simulate_letters",
    "simulate_rejections",
]

SEED = 20241124
#: Bytes one replication holds at the peak of a row's simulation: float64 arrays of a row of
#: 100 questions (difficulty, cluster and model × item effects, probabilities and scores of up
#: to three models, their differences), rounded up.
BYTES_PER_REPLICATION = 8 * 100 * 24


def available_memory() -> int | None:
    """Bytes of memory this machine can give now (``MemAvailable``; None: unknown)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def max_replications(available: int | None = None) -> int | None:
    """The most replications whose arrays fit in half of ``available`` bytes (default: this
    machine's available memory); None when the memory is unknown."""
    available = available_memory() if available is None else available
    return None if available is None else available // 2 // BYTES_PER_REPLICATION


@dataclass(frozen=True)
class Design:
    """The simulated exam (module docstring): sizes and the spread of each effect, in logits."""

    theta_diff: float = 0.0
    n_questions: int = 100
    n_shuffles: int = 30
    sigma_item: float = 1.0
    sigma_cluster: float = 0.5
    sigma_model_item: float = 1.0


def mc_interval(rate: float, replications: int) -> tuple[float, float]:
    """Wilson's 95 % interval of a simulated rate: ``round(rate * replications)`` of ``replications``.

    Examples
    --------
    >>> [round(x, 4) for x in mc_interval(0.976, 2000)]
    [0.9683, 0.9819]
    """
    return wilson_interval(round(rate * replications), replications)


@dataclass(frozen=True)
class CalibrationRow:
    """Rejection rates at ``alpha`` for one design."""

    design: Design
    replications: int
    clustered: float
    naive: float
    mean_accuracy_diff: float

    def interval(self, rate: float) -> tuple[float, float]:
        """The Monte-Carlo 95 % interval of ``rate`` (``clustered`` or ``naive``)."""
        return mc_interval(rate, self.replications)


@dataclass(frozen=True)
class LettersRow:
    """Share of replications in which two equal models share a letter (a third is ``theta_diff`` better)."""

    design: Design
    replications: int
    share: float

    def interval(self) -> tuple[float, float]:
        """The Monte-Carlo 95 % interval of ``share``."""
        return mc_interval(self.share, self.replications)


def _cluster_layout(n_questions: int, rng: np.random.Generator) -> npt.NDArray[np.int64]:
    sizes: list[int] = []
    while sum(sizes) < n_questions:
        sizes.append(int(rng.integers(2, 5)))
    return np.repeat(np.arange(len(sizes)), sizes)[:n_questions]


def _scores(
    design: Design, thetas: list[float], replications: int, rng: np.random.Generator
) -> tuple[list[npt.NDArray[np.float64]], npt.NDArray[np.float64]]:
    """Question scores (replications × questions) of each model, and the question × cluster one-hot."""
    cluster = _cluster_layout(design.n_questions, rng)
    groups = int(cluster.max()) + 1
    onehot = np.eye(groups)[cluster]
    shape = (replications, design.n_questions)
    b = rng.normal(0.0, design.sigma_item, shape)
    scores = []
    for theta in thetas:
        u = rng.normal(0.0, design.sigma_cluster, (replications, groups)) @ onehot.T
        v = rng.normal(0.0, design.sigma_model_item, shape)
        p = 1 / (1 + np.exp(-(theta - b + u + v)))
        scores.append(rng.binomial(design.n_shuffles, p) / design.n_shuffles)
    return scores, onehot


def _clustered_p(d: npt.NDArray[np.float64], onehot: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Two-sided p of the clustered paired t test for each row of ``d`` (CR1, ``G - 1`` df)."""
    from scipy import stats  # noqa: PLC0415 (slow import)

    n, groups = onehot.shape
    sums = (d - d.mean(axis=1, keepdims=True)) @ onehot
    se = np.sqrt(groups / (groups - 1) * np.sum(sums**2, axis=1) / n**2)
    t = d.mean(axis=1) / np.where(se > SE_ZERO, se, np.nan)
    return np.asarray(np.nan_to_num(2 * stats.t.sf(np.abs(t), groups - 1), nan=1.0), dtype=float)


def simulate_rejections(
    design: Design = Design(), replications: int = 2000, alpha: float = 0.05, seed: int = SEED
) -> CalibrationRow:
    """Share of replications in which each test rejects at ``alpha`` (module docstring)."""
    from scipy import stats  # noqa: PLC0415 (slow import)

    rng = np.random.default_rng(seed)
    (sa, sb), onehot = _scores(design, [design.theta_diff / 2, -design.theta_diff / 2], replications, rng)
    clustered = _clustered_p(sa - sb, onehot) < alpha
    records = design.n_questions * design.n_shuffles
    pa, pb = sa.mean(axis=1), sb.mean(axis=1)
    pooled = (pa + pb) / 2
    z = (pa - pb) / np.sqrt(pooled * (1 - pooled) * 2 / records)
    naive = 2 * stats.norm.sf(np.abs(z)) < alpha
    return CalibrationRow(
        design, replications, float(np.mean(clustered)), float(np.mean(naive)), float(np.mean(pa - pb))
    )


def simulate_letters(
    design: Design = Design(), replications: int = 1000, alpha: float = 0.05, seed: int = SEED
) -> LettersRow:
    """Models A = B and C (``theta_diff`` better): how often A and B share a letter after Holm."""
    rng = np.random.default_rng(seed)
    (sa, sb, sc), onehot = _scores(design, [0.0, 0.0, design.theta_diff], replications, rng)
    names = ("A", "B", "C")
    pairs = [("A", "B"), ("A", "C"), ("B", "C")]
    p = np.stack([_clustered_p(x - y, onehot) for x, y in ((sa, sb), (sa, sc), (sb, sc))], axis=1)
    means = np.stack([sa.mean(axis=1), sb.mean(axis=1), sc.mean(axis=1)], axis=1)
    shared = 0
    for k in range(replications):
        adjusted = adjust_pvalues(p[k], "holm")  # as compare adjusts (directional Holm)
        significant = [pair for pair, q in zip(pairs, adjusted, strict=True) if q < alpha]
        letters = letter_sets(dict(zip(names, means[k].tolist(), strict=True)), significant)
        shared += share_a_letter(letters, "A", "B")
    return LettersRow(design, replications, shared / replications)


def calibration_rows(replications: int = 2000) -> tuple[list[CalibrationRow], list[LettersRow]]:
    """The designs of ``docs/comparisons.md``: the null with and without a model × item effect,
    a near-null and planted differences, and the letters of two equal models beside a better one."""
    base = Design()
    designs = [
        replace(base, sigma_model_item=0.0),
        base,
        replace(base, sigma_model_item=2.0),
        replace(base, theta_diff=0.1),
        replace(base, theta_diff=0.2),
        replace(base, theta_diff=0.4),
        replace(base, theta_diff=0.6),
    ]
    rows = [simulate_rejections(d, replications) for d in designs]
    referee = replace(base, n_questions=60, sigma_item=1.5)  # issue 27's design: 60 items, N(0, 1.5²) logits
    letters = [simulate_letters(replace(referee, theta_diff=diff), replications) for diff in (0.0, 0.3, 0.6)]
    return rows, letters


def _rate(rate: float, replications: int) -> str:
    """``0.050 (100/2000) [0.041, 0.060]``: the rate, its count of replications, its Monte-Carlo interval."""
    low, high = mc_interval(rate, replications)
    return f"{rate:.3f} ({round(rate * replications)}/{replications}) [{low:.3f}, {high:.3f}]"


def calibration_lines(replications: int = 2000) -> list[str]:
    """The text ``enade-bench compare --calibration`` prints: each rate with its count and 95 % Monte-Carlo interval."""
    rows, letters = calibration_rows(replications)
    lines = [
        "theta_diff  sigma_model_item  accuracy_diff  clustered_paired_t (count) [95% MC]  "
        "naive_pooled_z (count) [95% MC]  "
        f"(rejection rate at alpha 0.05, {replications} replications, 100 questions x 30 shuffles, "
        "clusters of 2-4; count: replications rejecting; [95% MC]: Wilson interval over the replications)"
    ]
    for row in rows:
        d = row.design
        lines.append(
            f"{d.theta_diff:10.1f}  {d.sigma_model_item:16.1f}  {row.mean_accuracy_diff:13.3f}  "
            f"{_rate(row.clustered, replications):>34}  {_rate(row.naive, replications):>31}"
        )
    lines.append(
        "theta_C  share_equal_A_B_a_letter (count) [95% MC]  (models A = B and C, Holm over 3 pairs, "
        f"compact letters; {replications} replications, 60 questions x 30 shuffles, item logits "
        "N(0, 1.5^2))"
    )
    lines += [f"{share.design.theta_diff:7.1f}  {_rate(share.share, replications):>41}" for share in letters]
    return lines

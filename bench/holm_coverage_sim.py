r"""Joint coverage of the statements a comparison shows: a simulation over whole exams.

Each exam draws ``n_questions`` questions from a population, difficulty
:math:`b_q \sim N(0, \sigma_b^2)`, and model :math:`m` answers question :math:`q` once,
right with probability :math:`\operatorname{logit}^{-1}(\theta_m - b_q)`: every question
shifts with the model's ability.  The true difference of two models is the population's,

.. math::

    \delta_{ab} = E_b\bigl[\operatorname{logit}^{-1}(\theta_a - b) - \operatorname{logit}^{-1}(\theta_b - b)\bigr],

computed by Gauss–Hermite quadrature.  Every pair is compared as ``compare`` does it
(:func:`~enade_bench.metrics.paired.paired_difference`: McNemar's score test and Tango's
interval) and the family's statements are made by
:func:`~enade_bench.metrics.simultaneous.shown_statements`.  An exam is *covered* when
every statement holds for its true difference at once (a bound ``> 0`` when
:math:`0 < \delta \le` its upper limit; an interval when it holds :math:`\delta`).  For
comparison the same exams are scored with the old display, two-sided Holm's intervals at
its step levels :math:`\alpha/(K-j+1)` (issue 43).

:data:`DESIGNS` holds the two designs of issue 43: small shifts (few rejections) and a
stress design with several rejections, but never all.  The docs' numbers come from
``docs/holm_coverage.py`` (1,000 exams each); the tests run a seeded 150-exam version.

References
----------
.. [1] K. Strassburger and F. Bretz, "Compatible simultaneous lower confidence bounds for
   the Holm procedure and other Bonferroni-based closed tests", Statistics in Medicine
   27(24), 4914–4927, 2008.
.. [2] T. P. Morris, I. R. White and M. J. Crowther, "Using simulation studies to evaluate
   statistical methods", Statistics in Medicine 38(11), 2074–2102, 2019.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from enade_bench.metrics.accuracy import wilson_interval
from enade_bench.metrics.paired import PairedDifference, pair_interval, paired_difference
from enade_bench.metrics.simultaneous import ABOVE, BELOW, Statement, decision_levels, shown_statements

__all__ = ["DESIGNS", "CoverageDesign", "CoverageResult", "covers", "simulate_coverage"]


@dataclass(frozen=True)
class CoverageDesign:
    """One simulated design: the models' abilities (logits), the exam's size, the items' spread."""

    name: str
    thetas: tuple[float, ...]
    n_questions: int = 200
    sigma_item: float = 1.5


#: Issue 43's designs: small shifts; every item shifts with several rejections (not all).
DESIGNS = (
    CoverageDesign("small shifts", (0.0, 0.05, 0.10, 0.15, 0.20)),
    CoverageDesign("several rejections", (0.0, 0.0, 0.5, 1.0, 1.5)),
)


@dataclass(frozen=True)
class CoverageResult:
    """Joint coverage over ``exams`` simulated exams.

    Attributes
    ----------
    design, exams, adjust
        What was simulated.
    covered
        Exams whose every shown statement held.
    step_covered
        Exams whose every interval at Holm's step level :math:`\\alpha_i` held (the old display).
    mean_rejected, all_rejected
        Mean rejections per exam, and exams with every pair rejected.
    """

    design: CoverageDesign
    exams: int
    adjust: str
    covered: int
    step_covered: int
    mean_rejected: float
    all_rejected: int

    @property
    def rate(self) -> float:
        """Joint coverage of the shown statements."""
        return self.covered / self.exams

    def interval(self, count: int | None = None) -> tuple[float, float]:
        """Wilson's 95 % Monte-Carlo interval of ``count`` (default: ``covered``) of ``exams``."""
        return wilson_interval(self.covered if count is None else count, self.exams)


def covers(statement: Statement, delta: float) -> bool:
    """Whether ``statement`` holds for the true difference ``delta`` (module docstring)."""
    if statement.kind == ABOVE:
        return 0 < delta <= statement.high
    if statement.kind == BELOW:
        return statement.low <= delta < 0
    return statement.low <= delta <= statement.high


def _two_sided_holm_levels(pvalues: list[float], alpha: float) -> list[float]:
    """The old display's levels: two-sided Holm's step level alpha/(K-j+1) while rejecting, alpha/(K-r) after."""
    k = len(pvalues)
    out = [math.nan] * k
    rejected = 0
    for step, index in enumerate(sorted(range(k), key=lambda i: pvalues[i])):
        if pvalues[index] < alpha / (k - step) and rejected == step:
            out[index] = alpha / (k - step)
            rejected += 1
        else:
            out[index] = alpha / (k - rejected)
    return out


def _true_differences(design: CoverageDesign) -> dict[tuple[int, int], float]:
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    b = design.sigma_item * nodes
    accuracy = [
        float(np.sum(weights / (1 + np.exp(-(theta - b))))) / math.sqrt(2 * math.pi)
        for theta in design.thetas
    ]
    return {(i, j): accuracy[i] - accuracy[j] for i, j in combinations(range(len(design.thetas)), 2)}


def simulate_coverage(
    design: CoverageDesign, exams: int = 1000, alpha: float = 0.05, adjust: str = "holm", seed: int = 43
) -> CoverageResult:
    """Simulate ``exams`` exams of ``design`` and count those whose statements all hold.

    Parameters
    ----------
    design
        The models and the exam (:class:`CoverageDesign`).
    exams
        Simulated exams.
    alpha
        The family's level.
    adjust
        ``holm`` or ``bonferroni`` (the simultaneous ones).
    seed
        Seed of the generator.

    Returns
    -------
    CoverageResult
    """
    rng = np.random.default_rng(seed)
    truth = _true_differences(design)
    pairs = list(truth)
    covered = step_covered = rejected_total = all_rejected = 0
    for _ in range(exams):
        b = rng.normal(0.0, design.sigma_item, design.n_questions)
        answers = [
            (rng.random(design.n_questions) < 1 / (1 + np.exp(-(t - b)))).astype(float) for t in design.thetas
        ]
        results: list[PairedDifference] = [
            paired_difference(answers[i], answers[j], single_record=True) for i, j in pairs
        ]
        pvalues = [r.p_value for r in results]
        shown = shown_statements(
            pvalues,
            [r.diff for r in results],
            alpha,
            adjust,
            lambda k, conf, rs=results: pair_interval(rs[k], conf),
        )  # type: ignore[misc]
        covered += all(s is not None and covers(s, truth[pair]) for s, pair in zip(shown, pairs, strict=True))
        steps = (
            _two_sided_holm_levels(pvalues, alpha)
            if adjust == "holm"
            else decision_levels(pvalues, alpha, adjust)
        )
        step_intervals = [pair_interval(r, 1 - level) for r, level in zip(results, steps, strict=True)]
        step_covered += all(
            low <= truth[pair] <= high for (low, high), pair in zip(step_intervals, pairs, strict=True)
        )
        rejected = sum(1 for s in shown if s is not None and s.different)
        rejected_total += rejected
        all_rejected += rejected == len(pairs)
    return CoverageResult(design, exams, adjust, covered, step_covered, rejected_total / exams, all_rejected)

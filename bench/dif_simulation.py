r"""Simulations of machine-human DIF: power, false-positive rate, and the unit of evidence.

:func:`simulate_dif` plants DIF in independent simulated machines (every pattern a
respondent of its own) and measures the power and false-positive rate of
:func:`~enade_bench.psychometrics.dif.machine_human_dif`.

:func:`simulate_model_unit` is the case the pooled test gets wrong: ``M`` models,
``K`` shuffles each, no DIF. Model :math:`m` has ability
:math:`\theta_m \sim N(\mu, 1)` and, for each item, its own probability of a correct
answer :math:`p_{mj} \sim \operatorname{Beta}` with mean the human 3PL
:math:`P_j(\theta_m)` (times a planted log-odds shift :math:`\delta_j` when asked) and
intra-model correlation :math:`\rho` (the model knows or does not know the item; its
shuffles agree); each shuffle answers :math:`y_{mkj} \sim \operatorname{Bernoulli}(p_{mj})`.
Machines in general do not differ from humans (:math:`E\,p_{mj} = P_j(\theta_m)`), but
each model has item idiosyncrasies; with :math:`\rho = 0` the shuffles are independent.
Both units of :class:`~enade_bench.psychometrics.dif.DifOptions` run on the same data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from enade_bench.psychometrics.dif import DifOptions, machine_human_dif
from enade_bench.psychometrics.irt import EPS, ItemParams, logistic, prob


@dataclass(frozen=True)
class DifSimulation:
    """Power and false-positive rate of :func:`machine_human_dif` on simulated machines.

    Attributes
    ----------
    power, fpr : float
        Share of planted / unplanted items with ``p < alpha`` (per test).
    power_bh, fdr_bh_fp : float
        Share of planted items flagged at ``q <= alpha``; share of unplanted
        items flagged at ``q <= alpha``.
    n_planted, n_null : int
        Item tests behind each rate (over all replications).
    """

    power: float
    fpr: float
    power_bh: float
    fdr_bh_fp: float
    n_planted: int
    n_null: int


def _plant(
    n_items: int, n_planted: int, shift: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Random planted items and their shifts ±``shift`` (random sign)."""
    planted = np.zeros(n_items, dtype=bool)
    planted[rng.choice(n_items, n_planted, replace=False)] = True
    delta = np.where(planted, np.where(rng.random(n_items) < 0.5, shift, -shift), 0.0)
    return planted, delta


def _rates(hits: np.ndarray, counts: np.ndarray) -> DifSimulation:
    n_pl, n_null = max(int(counts[0]), 1), max(int(counts[1]), 1)
    return DifSimulation(
        hits[0] / n_pl, hits[1] / n_null, hits[2] / n_pl, hits[3] / n_null, int(counts[0]), int(counts[1])
    )


def simulate_dif(
    items: ItemParams,
    n: int,
    shift: float,
    n_planted: int,
    replications: int,
    rng: np.random.Generator,
    theta_mean: float = 0.0,
    alpha: float = 0.05,
) -> DifSimulation:
    """Plant a log-odds shift ±``shift`` on ``n_planted`` random items of independent machines and test.

    Each replication draws ``n`` machine abilities from :math:`N(\\mu, 1)`,
    answers from :math:`\\operatorname{logit} P = \\operatorname{logit}
    P_j(\\theta) + \\delta_j` (δ = ±shift, random sign, on the planted items;
    0 elsewhere) and runs :func:`machine_human_dif` with the pattern unit.
    """
    hits = np.zeros(4)
    counts = np.zeros(2, dtype=np.int64)
    for _ in range(replications):
        planted, delta = _plant(len(items), n_planted, shift, rng)
        p = np.clip(prob(rng.normal(theta_mean, 1.0, n), items), EPS, 1.0 - EPS)
        x = (rng.random(p.shape) < logistic(np.log(p) - np.log1p(-p) + delta)).astype(float)
        table = machine_human_dif(x, None, items, options=DifOptions(alpha=alpha)).table
        sig = (table["p"] < alpha).to_numpy()
        flag = table["flagged"].to_numpy(bool)
        hits += [sig[planted].sum(), sig[~planted].sum(), flag[planted].sum(), flag[~planted].sum()]
        counts += [planted.sum(), (~planted).sum()]
    return _rates(hits, counts)


@dataclass(frozen=True)
class UnitComparison:
    """The two units of evidence on the same simulated models (:func:`simulate_model_unit`).

    Attributes
    ----------
    model, pattern : DifSimulation
        Rates of the model-unit test and of the pooled pattern-unit test.
    any_flag_model, any_flag_pattern : float
        Share of replications with at least one unplanted item flagged.
    """

    model: DifSimulation
    pattern: DifSimulation
    any_flag_model: float
    any_flag_pattern: float


def simulate_model_unit(
    items: ItemParams,
    n_models: int,
    n_shuffles: int,
    rho: float,
    replications: int,
    rng: np.random.Generator,
    shift: float = 0.0,
    n_planted: int = 0,
) -> UnitComparison:
    """``n_models`` models × ``n_shuffles`` shuffles with intra-model correlation ``rho``; both units tested.

    See the module docstring for the generating model. Rates at α = 0.05 (per test,
    and flagged at Benjamini-Hochberg q ≤ 0.05); ``shift``/``n_planted`` plant DIF
    as in :func:`simulate_dif`.
    """
    if not 0 <= rho < 1:
        raise ValueError(f"rho must be in [0, 1); got {rho}")
    hits = {"model": np.zeros(4), "pattern": np.zeros(4)}
    anyflag = {"model": 0, "pattern": 0}
    counts = np.zeros(2, dtype=np.int64)
    models = [f"m{m}" for m in range(n_models) for _ in range(n_shuffles)]
    for _ in range(replications):
        planted, delta = _plant(len(items), n_planted, shift, rng)
        base = np.clip(prob(rng.normal(0.0, 1.0, n_models), items), EPS, 1.0 - EPS)
        mean = np.clip(logistic(np.log(base) - np.log1p(-base) + delta), 1e-4, 1 - 1e-4)  # (M, J)
        p = mean if rho == 0 else rng.beta(mean * (1 - rho) / rho, (1 - mean) * (1 - rho) / rho)
        x = (rng.random((n_models, n_shuffles, len(items))) < p[:, None, :]).astype(float)
        x = x.reshape(n_models * n_shuffles, len(items))
        for unit in ("model", "pattern"):
            table = machine_human_dif(x, None, items, models=models, options=DifOptions(unit=unit)).table
            sig = (table["p"] < 0.05).to_numpy()
            flag = table["flagged"].to_numpy(bool)
            hits[unit] += [sig[planted].sum(), sig[~planted].sum(), flag[planted].sum(), flag[~planted].sum()]
            anyflag[unit] += int(flag[~planted].any())
        counts += [planted.sum(), (~planted).sum()]
    return UnitComparison(
        _rates(hits["model"], counts),
        _rates(hits["pattern"], counts),
        anyflag["model"] / replications,
        anyflag["pattern"] / replications,
    )

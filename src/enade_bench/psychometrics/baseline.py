"""Random-choice baseline over the same option shuffles as the models.

A respondent that picks one of the options uniformly at random answers an
item with :math:`m` options correctly with probability :math:`1/m`, whatever
the shuffle; its θ, l_z and accuracy per shuffle give the floor a model must
beat (:func:`random_baseline`). With few shuffles the mean over shuffles
depends on the seed; :func:`seed_spread` measures by how much, against the
number of shuffles (the ``enade-bench irt baseline --seeds`` command).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from enade_bench.psychometrics.estimation import MIRT, Method, Quadrature
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.psychometrics.shuffles import score_shuffles


def random_responses(
    item_ids: Sequence[str],
    rng: np.random.Generator,
    n_shuffles: int = 30,
    n_options: int | Mapping[str, int] = 5,
    respondent: str = "random",
) -> pd.DataFrame:
    """Tidy responses of a uniform random guesser: ``correct ~ Bernoulli(1/m)``.

    Parameters
    ----------
    item_ids : sequence of str
        The items answered.
    rng : numpy.random.Generator
        Seeded generator.
    n_shuffles : int
        Number of shuffles (default 30, as the models).
    n_options : int or mapping
        Options per item (5 for ENEM), or a mapping item id → options.
    respondent : str
        Name in the ``respondent`` column.

    Returns
    -------
    DataFrame
        ``respondent, shuffle, item_id, correct``.
    """
    ids = [str(i) for i in item_ids]
    m = np.array([n_options[i] if isinstance(n_options, Mapping) else n_options for i in ids], dtype=float)
    if (m < 1).any():
        raise ValueError("every item needs at least one option")
    correct = (rng.random((n_shuffles, len(ids))) < 1.0 / m).astype(int)
    return pd.DataFrame(
        {
            "respondent": respondent,
            "shuffle": np.repeat(np.arange(n_shuffles), len(ids)),
            "item_id": np.tile(ids, n_shuffles),
            "correct": correct.reshape(-1),
        }
    )


def random_baseline(
    items: ItemParams,
    rng: np.random.Generator,
    n_shuffles: int = 30,
    n_options: int | Mapping[str, int] = 5,
    method: Method = "eap",
    quadrature: Quadrature = MIRT,
) -> pd.DataFrame:
    """θ, l_z and accuracy of the random guesser per shuffle (see :func:`score_shuffles`)."""
    frame = random_responses(items.item_ids, rng, n_shuffles, n_options)
    return score_shuffles(frame, items, method, quadrature)


@dataclass(frozen=True)
class SeedSpread:
    """How much the random baseline's mean over shuffles depends on the seed.

    Attributes
    ----------
    table : DataFrame
        One row per number of shuffles ``K``: ``n_shuffles``, ``n_seeds``,
        ``accuracy_sd``, ``theta_sd``, ``lz_sd`` (SD over seeds of the mean
        over ``K`` shuffles), ``accuracy_range`` (max - min over seeds) and
        ``accuracy_sd_expected`` (binomial, :math:`\\sqrt{p(1-p)/(JK)}`).
    threshold : float
        The criterion on ``accuracy_sd`` (default 0.005, half a percentage point).
    stable_at : int or None
        Smallest ``K`` in the table with ``accuracy_sd < threshold`` (None if none).
    required_expected : int
        Smallest ``K`` with the binomial SD below the threshold:
        :math:`\\lceil p(1-p) / (J\\,t^2) \\rceil`.
    """

    table: pd.DataFrame
    threshold: float
    stable_at: int | None
    required_expected: int


def seed_spread(
    items: ItemParams,
    seeds: Sequence[int],
    shuffle_counts: Sequence[int] = (5, 10, 20, 30, 50, 100, 200),
    n_options: int = 5,
    threshold: float = 0.005,
    quadrature: Quadrature = MIRT,
    stream: int = 0,
) -> SeedSpread:
    r"""Seed-to-seed spread of the random baseline's mean against the number of shuffles.

    For each seed :math:`s` the guesser answers :math:`K_{max}` shuffles
    (:func:`random_responses` with ``default_rng(s)``); the mean over the
    first :math:`K` shuffles is the baseline a run with :math:`K` shuffles
    would report (``stream`` gives each exam its own draws: the generator is
    ``default_rng([s, stream])``). Its SD over seeds measures the seed dependence; the
    criterion is ``accuracy_sd < threshold``. For accuracy the answer is
    known in closed form: the mean of :math:`JK` Bernoulli(:math:`1/m`)
    answers has SD :math:`\sqrt{p(1-p)/(JK)}`, :math:`p = 1/m`.
    """
    if len(seeds) < 2:
        raise ValueError("the spread needs at least 2 seeds")
    counts = sorted({int(k) for k in shuffle_counts})
    if counts[0] < 1:
        raise ValueError("shuffle counts must be >= 1")
    k_max = counts[-1]
    means: dict[int, list[tuple[float, float, float]]] = {k: [] for k in counts}
    for seed in seeds:
        per = random_baseline(
            items, np.random.default_rng([seed, stream]), k_max, n_options, "eap", quadrature
        )
        per = per.sort_values("shuffle")
        for k in counts:
            head = per[per["shuffle"] < k]
            means[k].append((head["accuracy"].mean(), head["theta"].mean(), head["lz"].mean()))
    p = 1.0 / n_options
    rows = []
    for k in counts:
        arr = np.array(means[k])
        rows.append(
            {
                "n_shuffles": k,
                "n_seeds": len(seeds),
                "accuracy_mean": arr[:, 0].mean(),
                "accuracy_sd": arr[:, 0].std(ddof=1),
                "accuracy_range": arr[:, 0].max() - arr[:, 0].min(),
                "theta_mean": arr[:, 1].mean(),
                "theta_sd": arr[:, 1].std(ddof=1),
                "lz_sd": np.nanstd(arr[:, 2], ddof=1),
                "accuracy_sd_expected": float(np.sqrt(p * (1 - p) / (len(items) * k))),
            }
        )
    table = pd.DataFrame(rows)
    stable = table.loc[table["accuracy_sd"] < threshold, "n_shuffles"]
    required = int(np.ceil(p * (1 - p) / (len(items) * threshold**2)))
    return SeedSpread(table, threshold, int(stable.iloc[0]) if len(stable) else None, required)

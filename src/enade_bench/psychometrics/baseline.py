"""Random-choice baseline over the same option shuffles as the models.

A respondent that picks one of the options uniformly at random answers an
item with :math:`m` options correctly with probability :math:`1/m`, whatever
the shuffle; its θ, l_z and accuracy per shuffle give the floor a model must
beat.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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

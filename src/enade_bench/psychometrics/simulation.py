"""Simulated examinees under the 3PL: a human reference cloud.

Every function takes an explicit :class:`numpy.random.Generator`.  The l_z null study of
``docs/psychometrics.md``, a check of the method, is ``bench/lz_null_study.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from enade_bench.psychometrics.estimation import MIRT, Method, Quadrature, estimate_theta
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.psychometrics.personfit import lz, simulate_responses


def simulate_population(
    items: ItemParams,
    n: int,
    rng: np.random.Generator,
    mean: float = 0.0,
    sd: float = 1.0,
    method: Method = "eap",
    quadrature: Quadrature = MIRT,
) -> pd.DataFrame:
    r"""A simulated human population: :math:`\theta \sim N(\mu, \sigma^2)`, responses from the 3PL.

    Each simulated examinee answers item :math:`j` correctly with
    probability :math:`P_j(\theta)`; θ is then re-estimated from the
    responses as for the models, so plots can show the human cloud next to
    them.

    Returns
    -------
    DataFrame
        ``true_theta, theta, se, lz, accuracy`` (one row per examinee).
    """
    true = rng.normal(mean, sd, n)
    x = simulate_responses(true, items, rng)
    est = estimate_theta(x, items, method, quadrature)
    return pd.DataFrame(
        {
            "true_theta": true,
            "theta": est.theta,
            "se": est.se,
            "lz": lz(x, est.theta, items),
            "accuracy": x.mean(axis=1),
        }
    )

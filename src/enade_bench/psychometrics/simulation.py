"""Simulated examinees under the 3PL: a human reference cloud.

Every function takes an explicit :class:`numpy.random.Generator`.  The l_z null study of
``docs/psychometrics.md``, a check of the method, is ``bench/lz_null_study.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from enade_bench.psychometrics.estimation import MIRT, estimate_theta
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.psychometrics.personfit import lz, simulate_responses


def simulate_population(
    items: ItemParams,
    n: int,
    rng: np.random.Generator,
) -> pd.DataFrame:
    r"""A simulated human population: :math:`\theta \sim N(0, 1)`, responses from the 3PL.

    Each simulated examinee answers item :math:`j` correctly with
    probability :math:`P_j(\theta)`; θ is then re-estimated from the
    responses as for the models (EAP, the mirt preset), so plots can show the human cloud next to
    them.

    Returns
    -------
    DataFrame
        ``true_theta, theta, se, lz, accuracy`` (one row per examinee).
    """
    true = rng.normal(0.0, 1.0, n)
    x = simulate_responses(true, items, rng)
    est = estimate_theta(x, items, "eap", MIRT)
    return pd.DataFrame(
        {
            "true_theta": true,
            "theta": est.theta,
            "se": est.se,
            "lz": lz(x, est.theta, items),
            "accuracy": x.mean(axis=1),
        }
    )

"""The null behaviour of l_z and l_z* per θ estimator: the study of ``docs/psychometrics.md``.

Used by ``docs/psychometrics_lz_simulation.py`` and ``tests/psychometrics/test_simulation.py``.

References
----------
Snijders, T. A. B. (2001). Asymptotic null distribution of person fit
statistics with estimated person parameter. *Psychometrika*, 66(3), 331-342.

van Krimpen-Stoop, E. M. L. A., & Meijer, R. R. (1999). The null
distribution of person-fit statistics for conventional and adaptive tests.
*Applied Psychological Measurement*, 23(4), 327-345.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from enade_bench.psychometrics.estimation import MIRT, Method, Quadrature, estimate_theta
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.psychometrics.personfit import lz, lz_star, simulate_responses


def lz_null_study(
    items: ItemParams,
    thetas: ArrayLike,
    n_per_theta: int,
    rng: np.random.Generator,
    methods: Sequence[Method] = ("eap", "ml", "map", "wle"),
    alpha: float = 0.05,
    quadrature: Quadrature = MIRT,
) -> pd.DataFrame:
    r"""Null behaviour of l_z and l_z* at fixed true θ, per estimator.

    For each true θ, ``n_per_theta`` model-conforming patterns are drawn,
    θ is estimated with each method and l_z (and l_z* where defined) is
    computed. Under the null a well-calibrated statistic has mean 0, SD 1
    and flags :math:`\alpha` of the patterns at the normal cut-off
    :math:`z_\alpha`; a conservative one flags fewer (small SD, mean > 0).

    Returns
    -------
    DataFrame
        ``true_theta, method, statistic, mean, sd, flag_rate, n_assessable``.
    """
    cut = stats.norm.ppf(alpha)
    rows = []
    for true in np.asarray(thetas, dtype=np.float64).reshape(-1):
        x = simulate_responses(np.full(n_per_theta, true), items, rng)
        for method in methods:
            est = estimate_theta(x, items, method, quadrature)
            stats_by_name = {"lz": lz(x, est.theta, items)}
            if method != "eap":
                stats_by_name["lz_star"] = lz_star(x, est.theta, items, method, quadrature)
            for name, values in stats_by_name.items():
                ok = values[np.isfinite(values)]
                rows.append(
                    {
                        "true_theta": float(true),
                        "method": method,
                        "statistic": name,
                        "mean": float(ok.mean()) if ok.size else np.nan,
                        "sd": float(ok.std(ddof=1)) if ok.size > 1 else np.nan,
                        "flag_rate": float(np.mean(ok < cut)) if ok.size else np.nan,
                        "n_assessable": int(ok.size),
                    }
                )
    return pd.DataFrame(rows)

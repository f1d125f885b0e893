r"""The verdict: does this exam measure this model?  Pure functions, no I/O.

For one model on one exam (area × language) answered over :math:`K` option
shuffles, with :math:`\hat\theta_k` the EAP ability of shuffle :math:`k`:

* :math:`\bar\theta = K^{-1}\sum_k \hat\theta_k`, its 95 % interval the
  2.5 and 97.5 percentiles of the :math:`\hat\theta_k`, and
  :math:`\overline{SE}` the mean posterior SD;
* the ENEM score :math:`k_{area}\,\bar\theta + d_{area}` (INEP's constants);
* the aberrant share :math:`A = \#\{k : l^*_{z,k} < c_\alpha\} / K_a`, where
  :math:`l^*_{z,k}` is Snijders' corrected statistic at the WLE θ of shuffle
  :math:`k`, :math:`c_\alpha` the parametric-bootstrap :math:`\alpha`
  cut-off for these items and abilities, and :math:`K_a` the shuffles that
  are assessable (neither all correct nor all wrong);
* the relative information :math:`\rho = I(\bar\theta) / \max_\theta I(\theta)`.

The verdict word is

.. math::
    \text{verdict} = \begin{cases}
      \textit{unreliable (aberrant pattern)} & A \ge A_{max} \\
      \textit{outside the exam's range} & \text{else if } \rho < \rho_{min} \\
      \textit{measured} & \text{otherwise}
    \end{cases}

with :math:`A_{max} = 0.5` and :math:`\rho_{min} = 0.25` by default
(:class:`~enade_bench.benchmarks.enem.study.config.VerdictRule`).  Aberrance is checked
first: when most patterns do not fit the 3PL, :math:`\bar\theta` (and so
:math:`\rho`) is not interpretable.  :math:`\rho < 0.25` means the SE at
:math:`\bar\theta` is at least twice the smallest SE the exam can give.
A model with no assessable shuffle (:math:`K_a = 0`) has no aberrant share
and is judged on :math:`\rho` alone.

References
----------
Snijders, T. A. B. (2001). Asymptotic null distribution of person fit
statistics with estimated person parameter. *Psychometrika*, 66(3), 331-342.

de la Torre, J., & Deng, W. (2008). Improving person-fit assessment by
correcting the ability estimate and its reference distribution. *Journal of
Educational Measurement*, 45(2), 159-177.

Hambleton, R. K., Swaminathan, H., & Rogers, H. J. (1991). *Fundamentals of
Item Response Theory*, ch. 6. Sage.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from enade_bench.benchmarks.enem.study.config import VerdictRule

MEASURED = "measured"
UNRELIABLE = "unreliable (aberrant pattern)"
OUTSIDE = "outside the exam's range"
VERDICTS = (MEASURED, UNRELIABLE, OUTSIDE)


def aberrant_share(lz_star: ArrayLike, cutoff: float) -> tuple[float, int]:
    """Share of assessable shuffles whose l_z* is below ``cutoff``, and how many were assessable.

    Non-finite values (not assessable patterns) are left out; the share is
    NaN when none is left.
    """
    values = np.asarray(lz_star, dtype=np.float64).reshape(-1)
    finite = values[np.isfinite(values)]
    if finite.size == 0 or not math.isfinite(cutoff):
        return math.nan, int(finite.size)
    return float(np.mean(finite < cutoff)), int(finite.size)


def verdict_word(share: float, relative_information: float, rule: VerdictRule) -> str:
    """The verdict for one model × exam (see the module docstring for the rule).

    Examples
    --------
    >>> rule = VerdictRule()
    >>> verdict_word(0.1, 0.8, rule), verdict_word(0.6, 0.8, rule), verdict_word(0.1, 0.05, rule)
    ('measured', 'unreliable (aberrant pattern)', "outside the exam's range")
    """
    if math.isfinite(share) and share >= rule.max_aberrant_share:
        return UNRELIABLE
    if not math.isfinite(relative_information) or relative_information < rule.min_relative_information:
        return OUTSIDE
    return MEASURED


def add_verdicts(rows: pd.DataFrame, rule: VerdictRule) -> pd.DataFrame:
    """``rows`` (columns ``aberrant_share``, ``relative_information``) with a ``verdict`` column."""
    words = [
        verdict_word(float(s), float(r), rule)
        for s, r in zip(rows["aberrant_share"], rows["relative_information"], strict=True)
    ]
    return rows.assign(verdict=words)

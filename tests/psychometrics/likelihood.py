"""Reference forms of the likelihood and the estimating equation, per pattern at its own θ.

The package evaluates both on grids (:func:`~enade_bench.psychometrics.estimation.grid_log_likelihood`,
:func:`~enade_bench.psychometrics.estimation.modal`); the tests check the estimators against these.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from enade_bench.psychometrics.estimation import MIRT, Method, Quadrature, _score_terms, _split, prior_term
from enade_bench.psychometrics.irt import EPS, FloatArray, ItemParams, as_response_matrix, prob


def log_likelihood(theta: ArrayLike, responses: ArrayLike, items: ItemParams) -> FloatArray:
    r"""Log-likelihood of each response pattern at its own ``theta``.

    .. math:: \ell(\theta) = \sum_{j \in A} x_j \log P_j(\theta) + (1 - x_j)\log(1 - P_j(\theta))

    summing over the administered items :math:`A` (non-missing responses).

    Parameters
    ----------
    theta : array_like
        Shape ``(n,)``, one ability per row of ``responses``.
    responses : array_like
        Shape ``(n, J)``, 0/1/NaN.
    items : ItemParams
        The ``J`` items.
    """
    x = as_response_matrix(responses, len(items))
    p = np.clip(prob(np.asarray(theta, dtype=np.float64).reshape(-1), items), EPS, 1.0 - EPS)
    ll = np.where(np.isnan(x), 0.0, np.nan_to_num(x) * np.log(p) + (1.0 - np.nan_to_num(x)) * np.log1p(-p))
    total: FloatArray = ll.sum(axis=1)
    return total


def estimating_function(
    theta: ArrayLike, responses: ArrayLike, items: ItemParams, method: Method, quadrature: Quadrature = MIRT
) -> FloatArray:
    r"""The estimating equation :math:`g(\theta) = 0` that MAP, ML and WLE solve.

    .. math::
        g(\theta) = \sum_j (x_j - P_j) \frac{P_j'}{P_j(1 - P_j)} + r_0(\theta),
        \qquad r_0 = \begin{cases}
            0 & \text{ML} \\
            -(\theta - \mu)/\sigma^2 & \text{MAP, } N(\mu, \sigma^2) \text{ prior} \\
            J(\theta) / (2 I(\theta)) & \text{WLE, } J = \sum_j P_j' P_j'' / (P_j Q_j)
        \end{cases}

    Parameters
    ----------
    theta : array_like
        Shape ``(n,)``, one θ per respondent.
    responses : array_like
        Shape ``(n, J)``: 1, 0 or NaN.
    items : ItemParams
        The items.
    method : {"map", "ml", "wle"}
        Which :math:`r_0`.
    quadrature : Quadrature
        Supplies the MAP prior.

    References
    ----------
    Warm (1989), eq. 8; Snijders (2001), section 3 (same :math:`r_0` notation).
    """
    x = as_response_matrix(responses, len(items))
    t = np.asarray(theta, dtype=np.float64).reshape(-1)
    correct, _, administered = _split(x)
    score, info, warm_j = _score_terms(t, correct, administered.astype(np.float64), items)
    return score + prior_term(t, info, warm_j, method, quadrature)

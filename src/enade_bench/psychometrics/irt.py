"""The three-parameter logistic (3PL) item response model.

Item parameters are held in :class:`ItemParams`; response matrices are
``float`` arrays of shape ``(n_respondents, n_items)`` holding 1 (correct),
0 (wrong) or ``NaN`` (item not administered, skipped everywhere).

References
----------
Birnbaum, A. (1968). Some latent trait models and their use in inferring an
examinee's ability. In F. M. Lord & M. R. Novick, *Statistical Theories of
Mental Test Scores* (pp. 397-479). Addison-Wesley.

Baker, F. B., & Kim, S.-H. (2004). *Item Response Theory: Parameter
Estimation Techniques* (2nd ed.). Marcel Dekker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]

#: Probabilities are kept inside ``[EPS, 1 - EPS]`` before taking logarithms.
EPS = 1e-12


@dataclass(frozen=True)
class ItemParams:
    """Fixed 3PL item parameters (2PL when every ``c`` is 0).

    Parameters
    ----------
    item_ids : tuple of str
        One identifier per item, unique.
    a : ndarray
        Discrimination, ``a > 0``.
    b : ndarray
        Difficulty (location), finite.
    c : ndarray
        Lower asymptote (pseudo-guessing), ``0 <= c < 1``.

    Raises
    ------
    ValueError
        If the arrays differ in length, an id repeats or a parameter is
        outside its range.
    """

    item_ids: tuple[str, ...]
    a: FloatArray
    b: FloatArray
    c: FloatArray

    def __post_init__(self) -> None:
        a = np.asarray(self.a, dtype=np.float64).reshape(-1)
        b = np.asarray(self.b, dtype=np.float64).reshape(-1)
        c = np.asarray(self.c, dtype=np.float64).reshape(-1)
        ids = tuple(str(i) for i in self.item_ids)
        if not (len(ids) == a.size == b.size == c.size):
            raise ValueError("item_ids, a, b and c must have the same length")
        if len(set(ids)) != len(ids):
            raise ValueError("item_ids must be unique")
        for name, values, ok in (
            ("a", a, np.isfinite(a) & (a > 0)),
            ("b", b, np.isfinite(b)),
            ("c", c, np.isfinite(c) & (c >= 0) & (c < 1)),
        ):
            if not ok.all():
                bad = int(np.flatnonzero(~ok)[0])
                raise ValueError(f"item {ids[bad]!r}: {name} = {float(values[bad])} is out of range")
        object.__setattr__(self, "item_ids", ids)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "c", c)

    @classmethod
    def from_arrays(
        cls,
        a: ArrayLike,
        b: ArrayLike,
        c: ArrayLike | None = None,
        item_ids: Sequence[str] | None = None,
    ) -> ItemParams:
        """Build from arrays; ``c`` defaults to 0 (2PL), ids to ``"1".."J"``."""
        a_arr = np.asarray(a, dtype=np.float64).reshape(-1)
        c_arr = np.zeros_like(a_arr) if c is None else np.asarray(c, dtype=np.float64)
        ids = tuple(str(i + 1) for i in range(a_arr.size)) if item_ids is None else item_ids
        return cls(tuple(ids), a_arr, np.asarray(b, dtype=np.float64), c_arr)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> ItemParams:
        """Build from a frame with columns ``item_id, a, b`` and optionally ``c``.

        A missing or empty ``c`` is 0.
        """
        c = frame["c"].fillna(0.0) if "c" in frame.columns else None
        return cls.from_arrays(
            frame["a"].to_numpy(float),
            frame["b"].to_numpy(float),
            None if c is None else c.to_numpy(float),
            [str(i) for i in frame["item_id"]],
        )

    def to_frame(self) -> pd.DataFrame:
        """Columns ``item_id, a, b, c``."""
        return pd.DataFrame({"item_id": list(self.item_ids), "a": self.a, "b": self.b, "c": self.c})

    def __len__(self) -> int:
        return len(self.item_ids)


def logistic(x: ArrayLike) -> FloatArray:
    """Numerically stable logistic function ``1 / (1 + exp(-x))``."""
    out: FloatArray = np.asarray(0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=np.float64))))
    return out


def prob(theta: ArrayLike, items: ItemParams) -> FloatArray:
    r"""Probability of a correct answer under the 3PL model.

    .. math:: P_j(\theta) = c_j + \frac{1 - c_j}{1 + \exp[-a_j(\theta - b_j)]}

    Parameters
    ----------
    theta : array_like
        Abilities, any shape ``S``.
    items : ItemParams
        The ``J`` items.

    Returns
    -------
    ndarray
        Shape ``S + (J,)``.

    References
    ----------
    Birnbaum (1968); no scaling constant ``D`` (the logistic metric used by
    INEP's published parameters and by R mirt).
    """
    t = np.asarray(theta, dtype=np.float64)[..., None]
    psi = logistic(items.a * (t - items.b))
    return items.c + (1.0 - items.c) * psi


def prob_derivatives(theta: ArrayLike, items: ItemParams) -> tuple[FloatArray, FloatArray, FloatArray]:
    r"""``P``, ``dP/dθ`` and ``d²P/dθ²`` of the 3PL model.

    With :math:`\psi = 1/(1 + e^{-a(\theta - b)})`:
    :math:`P' = (1-c)\,a\,\psi(1-\psi)` and
    :math:`P'' = (1-c)\,a^2\,\psi(1-\psi)(1-2\psi)`.
    """
    t = np.asarray(theta, dtype=np.float64)[..., None]
    psi = logistic(items.a * (t - items.b))
    core = (1.0 - items.c) * psi * (1.0 - psi)
    p = items.c + (1.0 - items.c) * psi
    return p, items.a * core, items.a**2 * core * (1.0 - 2.0 * psi)


def item_information(theta: ArrayLike, items: ItemParams) -> FloatArray:
    r"""Fisher information of each item at ``theta``.

    .. math:: I_j(\theta) = \frac{P_j'(\theta)^2}{P_j(1 - P_j)}
              = a_j^2 \frac{(P_j - c_j)^2}{(1 - c_j)^2} \frac{1 - P_j}{P_j}

    Returns
    -------
    ndarray
        Shape ``theta.shape + (J,)``.

    References
    ----------
    Birnbaum (1968), eq. 20.4.16; Baker & Kim (2004), section 1.4.
    """
    p, dp, _ = prob_derivatives(theta, items)
    p = np.clip(p, EPS, 1.0 - EPS)
    return dp**2 / (p * (1.0 - p))


def test_information(theta: ArrayLike, items: ItemParams) -> FloatArray:
    r"""Test information :math:`I(\theta) = \sum_j I_j(\theta)`.

    Returns
    -------
    ndarray
        Same shape as ``theta``. The standard error of an ML estimate is
        :math:`1/\sqrt{I(\hat\theta)}`.
    """
    total: FloatArray = item_information(theta, items).sum(axis=-1)
    return total


def as_response_matrix(responses: ArrayLike, n_items: int) -> FloatArray:
    """Validate a response matrix: 2-D, ``n_items`` columns, values 0, 1 or NaN.

    Raises
    ------
    ValueError
        On a wrong shape or a value other than 0, 1 or NaN.
    """
    x = np.asarray(responses, dtype=np.float64)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2 or x.shape[1] != n_items:
        raise ValueError(f"responses must have shape (n, {n_items}); got {x.shape}")
    ok = np.isnan(x) | (x == 0.0) | (x == 1.0)
    if not ok.all():
        row, col = (int(v[0]) for v in np.nonzero(~ok))
        raise ValueError(f"response at row {row}, column {col} is {float(x[row, col])}; expected 0, 1 or NaN")
    return x


# ``test_information`` is not a pytest test, whatever its name.
test_information.__test__ = False  # type: ignore[attr-defined]

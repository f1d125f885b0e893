"""Vectorised bracketed root finding (one root per respondent).

References
----------
Dowell, M., & Jarratt, P. (1971). A modified regula falsi method for
computing the root of an equation. *BIT Numerical Mathematics*, 11, 168-174.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from enade_bench.psychometrics.irt import FloatArray


def illinois(
    g_at: Callable[[FloatArray], tuple[FloatArray, FloatArray]],
    lo: FloatArray,
    hi: FloatArray,
    g_lo: FloatArray,
    g_hi: FloatArray,
    tol: float,
    max_iter: int = 200,
) -> FloatArray:
    """Illinois (modified regula falsi) search of a root in each bracket.

    ``g_at(theta)`` returns ``(g, anything)`` for a vector of points; every
    bracket must satisfy ``g(lo) > 0 >= g(hi)``. Each step takes the secant
    point and halves the function value kept at a bracket end retained twice
    in a row (superlinear convergence, never leaves the bracket). Stops when
    every bracket is narrower than ``tol`` or ``|g| <= 1e-13``.
    """
    lo, hi, g_lo, g_hi = lo.copy(), hi.copy(), g_lo.copy(), g_hi.copy()
    side = np.zeros(lo.size, dtype=np.int8)
    theta = 0.5 * (lo + hi)
    active = np.ones(lo.size, dtype=bool)
    for _ in range(max_iter):
        denom = g_lo - g_hi
        with np.errstate(divide="ignore", invalid="ignore"):
            trial = np.where(denom > 0, lo + g_lo * (hi - lo) / denom, 0.5 * (lo + hi))
        trial = np.where((trial > lo) & (trial < hi), trial, 0.5 * (lo + hi))
        theta = np.where(active, trial, theta)
        g_new, _ = g_at(theta)
        positive = g_new > 0
        upd_lo = active & positive
        upd_hi = active & ~positive
        g_hi = np.where(upd_lo & (side == 1), 0.5 * g_hi, g_hi)
        g_lo = np.where(upd_hi & (side == -1), 0.5 * g_lo, g_lo)
        lo, g_lo = np.where(upd_lo, theta, lo), np.where(upd_lo, g_new, g_lo)
        hi, g_hi = np.where(upd_hi, theta, hi), np.where(upd_hi, g_new, g_hi)
        side = np.where(upd_lo, 1, np.where(upd_hi, -1, side)).astype(np.int8)
        active &= (hi - lo > tol) & (np.abs(g_new) > 1e-13)
        if not active.any():
            break
    return theta

"""Post-hoc adaptive testing: replay existing response patterns (see :mod:`enade_bench.psychometrics.cat`).

Every pattern is run to its end once (selection does not depend on the
stopping rule), storing θ, SE and the predicted shift after each item; the
stopping rule of :class:`~enade_bench.psychometrics.cat.CatConfig` is then
applied to the stored path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from enade_bench.psychometrics.cat import (
    DEFAULT_CONFIG,
    CatConfig,
    _posterior,
    _rules_hold,
    predicted_shift,
    select_item,
)
from enade_bench.psychometrics.estimation import eap
from enade_bench.psychometrics.irt import (
    EPS,
    FloatArray,
    ItemParams,
    as_response_matrix,
    item_information,
    prob,
)


@dataclass(frozen=True)
class CatSimulation:
    """Post-hoc adaptive tests over ``n`` response patterns.

    Attributes
    ----------
    order : ndarray of int
        Shape ``(n, L)``: item index given at each step (-1 after the
        pattern's items run out); ``L`` is the budget.
    theta_path, se_path : ndarray
        Shape ``(n, L)``: EAP θ and SE after each step (NaN after the end).
    theta_full, se_full : ndarray
        Shape ``(n,)``: EAP on every available item of the pattern.
    n_available : ndarray of int
        Items answered in the pattern (the full test).
    n_items : ndarray of int
        Items used when the stopping rule fired.
    theta, se : ndarray
        θ and SE at the stop.
    target_se : ndarray
        The SE target of each pattern.
    stopped_by : ndarray of str
        ``"rule"``, ``"budget"`` or ``"exhausted"`` (as :class:`CatTrace`).
    """

    order: NDArray[np.intp]
    theta_path: FloatArray
    se_path: FloatArray
    theta_full: FloatArray
    se_full: FloatArray
    n_available: NDArray[np.int64]
    n_items: NDArray[np.int64]
    theta: FloatArray
    se: FloatArray
    target_se: FloatArray
    stopped_by: NDArray[np.str_]

    @property
    def error(self) -> FloatArray:
        """:math:`\\hat\\theta_{CAT} - \\hat\\theta_{full}` per pattern."""
        out: FloatArray = self.theta - self.theta_full
        return out


def _stop(
    path_se: FloatArray,
    path_shift: FloatArray,
    n_avail: NDArray[np.int64],
    target: FloatArray,
    config: CatConfig,
) -> tuple[NDArray[np.int64], NDArray[np.str_]]:
    """Stopping step (1-based count) and reason for every pattern."""
    length = path_se.shape[1]
    steps = np.arange(1, length + 1)
    ok = (
        _rules_hold(path_se, path_shift, target[:, None], config)
        & (steps[None, :] >= config.min_items)
        & (steps[None, :] <= n_avail[:, None])
    )
    hit = ok.any(axis=1)
    first = np.where(hit, ok.argmax(axis=1) + 1, 0)
    end = np.minimum(n_avail, length)
    n_items = np.where(hit, first, end).astype(np.int64)
    reason = np.where(hit, "rule", np.where(end < n_avail, "budget", "exhausted")).astype(np.str_)
    return n_items, reason


def simulate_cat(
    responses: ArrayLike,
    items: ItemParams,
    config: CatConfig = DEFAULT_CONFIG,
    rng: np.random.Generator | None = None,
) -> CatSimulation:
    """Post-hoc CAT: replay existing patterns, asking only the items selected.

    Parameters
    ----------
    responses : array_like
        Shape ``(n, J)``: 1, 0 or NaN (item not available to that pattern,
        e.g. another booklet's item in a mixed matrix).
    items : ItemParams
        The ``J`` items.
    config : CatConfig
        Stopping rule; with ``full_se_margin`` the target of pattern ``i`` is
        ``max(target_se, se_full[i] + margin)``.
    rng : numpy.random.Generator, optional
        Needed when ``config.randomesque > 1``.

    Returns
    -------
    CatSimulation
    """
    x = as_response_matrix(responses, len(items))
    n = x.shape[0]
    avail0 = ~np.isnan(x)
    n_avail = avail0.sum(axis=1).astype(np.int64)
    if (n_avail == 0).any():
        raise ValueError(f"pattern {int(np.flatnonzero(n_avail == 0)[0])} has no answered item")
    full = eap(x, items, config.quadrature)
    length = int(n_avail.max()) if config.max_items is None else min(config.max_items, int(n_avail.max()))
    nodes = config.quadrature.nodes()
    p = np.clip(prob(nodes, items), EPS, 1.0 - EPS)
    log_p, log_q = np.log(p).T, np.log1p(-p).T  # (J, G)
    log_post = np.tile(np.log(config.quadrature.weights()), (n, 1))
    order = np.full((n, length), -1, dtype=np.intp)
    theta_path = np.full((n, length), np.nan)
    se_path = np.full((n, length), np.nan)
    shift_path = np.full((n, length), np.nan)
    theta, _ = _posterior(log_post, nodes)
    available = avail0.copy()
    rows = np.arange(n)
    for step in range(length):
        active = available.any(axis=1)
        if not active.any():
            break
        act = rows[active]
        j = select_item(theta[act], items, available[act], config.randomesque, rng)
        xj = x[act, j]
        available[act, j] = False
        log_post[act] += np.where(xj[:, None] == 1.0, log_p[j], log_q[j])
        mean, sd = _posterior(log_post[act], nodes)
        theta[act] = mean
        order[act, step] = j
        theta_path[act, step] = mean
        se_path[act, step] = sd
        rest = np.where(available[act], item_information(mean, items), 0.0).sum(axis=1)
        shift_path[act, step] = predicted_shift(sd, rest)
    target = np.full(n, np.inf if config.target_se is None else config.target_se)
    if config.full_se_margin is not None and config.target_se is not None:
        m = config.full_se_margin
        relative = full.se + m if config.margin_kind == "additive" else np.sqrt(full.se**2 + m**2)
        target = np.maximum(target, relative)
    n_items, reason = _stop(se_path, shift_path, n_avail, target, config)
    idx = n_items - 1
    return CatSimulation(
        order=order,
        theta_path=theta_path,
        se_path=se_path,
        theta_full=full.theta,
        se_full=full.se,
        n_available=n_avail,
        n_items=n_items,
        theta=theta_path[rows, idx],
        se=se_path[rows, idx],
        target_se=target,
        stopped_by=reason,
    )

r"""Computerised adaptive testing (CAT) with fixed 3PL item parameters.

Public API
----------
* :class:`CatConfig` — stopping and exposure settings.
* :func:`select_item` — next item by maximum Fisher information (optionally
  randomesque).
* :func:`run_cat` — *live* mode: asks ``answer(item_index) -> bool`` only for
  the selected items (any backend can be plugged in by the caller).
* :func:`~enade_bench.psychometrics.cat_posthoc.simulate_cat` — *post-hoc*
  mode: replays existing 0/1 patterns (``NaN`` = item not available to that
  respondent), vectorised (module :mod:`~enade_bench.psychometrics.cat_posthoc`).
* :func:`~enade_bench.psychometrics.cat_summary.cat_curve`,
  :func:`~enade_bench.psychometrics.cat_summary.cat_summary` — items against SE
  and error, target check (module :mod:`~enade_bench.psychometrics.cat_summary`).

Algorithm
---------
Start at the prior (θ = μ, SE = σ). At each step:

1. among the available, not yet administered items choose

   .. math:: j^* = \arg\max_j I_j(\hat\theta), \qquad
             I_j(\theta) = \frac{P_j'(\theta)^2}{P_j(\theta)\,[1 - P_j(\theta)]}

   (maximum Fisher information, Lord 1980, ch. 10); with randomesque
   exposure control of size :math:`k` (Kingsbury & Zara 1989) one of the
   :math:`k` most informative items is drawn uniformly (seeded);
2. record the response and update the EAP estimate (posterior mean and SD
   on the quadrature grid, :func:`~enade_bench.psychometrics.estimation.eap`,
   the R mirt-matching estimator);
3. stop when :math:`SE \le SE_{target}` (after at least ``min_items``), when
   ``max_items`` are used or when no item is left.

In post-hoc mode the selection does not depend on the stopping rule, so a
stopped CAT is a prefix of the full-length one: ``simulate_cat`` runs every
pattern to its end once and stores the whole path (θ and SE after each item);
the stopping rule is then applied to the path. The post-hoc target SE can be
per respondent, :math:`\max(SE_{target}, SE_{full} + m)` with the full-test
EAP SE (``full_se_margin`` :math:`m`).

Why not catsim: catsim 0.21 (the usual Python CAT package) requires
scikit-learn, numexpr, json_tricks and tqdm (none in this project's
dependencies), and its ``MinErrorStopper`` stops on :math:`1/\sqrt{I(\hat\theta)}`
rather than the EAP posterior SD the targets are defined on; its
maximum-information and randomesque selectors are each a few lines, written
here on our vectorised 3PL.

References
----------
Lord, F. M. (1980). *Applications of Item Response Theory to Practical Testing
Problems*. Erlbaum.

Kingsbury, G. G., & Zara, A. R. (1989). Procedures for selecting items for
computerized adaptive tests. *Applied Measurement in Education*, 2(4), 359-375.

Bock, R. D., & Mislevy, R. J. (1982). Adaptive EAP estimation of ability in a
microcomputer environment. *Applied Psychological Measurement*, 6(4), 431-444.

Magis, D., & Raîche, G. (2012). Random generation of response patterns under
computerized adaptive testing with the R package catR. *Journal of
Statistical Software*, 48(8), 1-31.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from enade_bench.psychometrics.estimation import MIRT, Quadrature
from enade_bench.psychometrics.irt import (
    EPS,
    FloatArray,
    ItemParams,
    item_information,
    prob,
)

StopReason = Literal["rule", "budget", "exhausted"]


@dataclass(frozen=True)
class CatConfig:
    r"""Settings of an adaptive test.

    Parameters
    ----------
    target_se : float or None
        Stop once the EAP posterior SD is at most this (``None``: no SE rule).
    max_shift : float or None
        Stop once the predicted SD of the change of θ that the remaining
        items could still bring, :func:`predicted_shift`, is at most this
        (``None``: no such rule). With both rules set, both must hold; with
        neither, only the budget stops the test.
    max_items : int or None
        Item budget (``None``: all available items).
    min_items : int
        Never stop on SE before this many items.
    randomesque : int
        Draw the next item among the ``k`` most informative (1 = pure maximum
        information).
    full_se_margin : float or None
        Post-hoc only: per-pattern target ``max(target_se, SE_full + margin)``
        (``margin_kind="additive"``) or ``max(target_se, sqrt(SE_full² + margin²))``
        (``"quadrature"``: the CAT estimate is then expected within about
        ``margin`` (one SD) of the full-test one, since
        :math:`\operatorname{Var}(\hat\theta_{full} - \hat\theta_k) \approx SE_k^2 - SE_{full}^2`).
    margin_kind : {"additive", "quadrature"}
        How ``full_se_margin`` combines with the full-test SE.
    quadrature : Quadrature
        Prior and grid of the EAP (default :data:`~enade_bench.psychometrics.estimation.MIRT`).
    """

    target_se: float | None = 0.35
    max_shift: float | None = None
    max_items: int | None = None
    min_items: int = 1
    randomesque: int = 1
    full_se_margin: float | None = None
    margin_kind: Literal["additive", "quadrature"] = "additive"
    quadrature: Quadrature = MIRT

    def __post_init__(self) -> None:
        for name, value in (("target_se", self.target_se), ("max_shift", self.max_shift)):
            if value is not None and not (np.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be >= 0; got {value}")
        if self.max_items is not None and self.max_items < 1:
            raise ValueError(f"max_items must be >= 1; got {self.max_items}")
        if self.min_items < 0:
            raise ValueError(f"min_items must be >= 0; got {self.min_items}")
        if self.randomesque < 1:
            raise ValueError(f"randomesque must be >= 1; got {self.randomesque}")


#: The default settings (SE ≤ 0.35, no budget, pure maximum information).
DEFAULT_CONFIG = CatConfig()

#: The post-hoc stopping rules by name (``irt cat --rule`` and the study's ``cat.rule``).
#: ``quadrature`` (default): :math:`SE_k \le \sqrt{SE_{full}^2 + 0.1^2}` after at least 15 items,
#: so the full test could still move θ by about 0.1 (one SD) at most; ``additive`` (issue 12's rule):
#: :math:`SE_k \le \max(0.35, SE_{full} + 0.05)`. Measured on the 2,400 published patterns in
#: ``docs/psychometrics_cat_dif.md``.
STOP_RULES: dict[str, CatConfig] = {
    "quadrature": CatConfig(target_se=0.0, full_se_margin=0.1, margin_kind="quadrature", min_items=15),
    "additive": CatConfig(target_se=0.35, full_se_margin=0.05, margin_kind="additive", min_items=1),
}


def stop_rule(
    rule: str = "quadrature",
    target_se: float | None = None,
    full_se_margin: float | None = None,
    min_items: int | None = None,
) -> CatConfig:
    """The named post-hoc stopping rule of :data:`STOP_RULES`, with any of its three settings overridden.

    Examples
    --------
    >>> c = stop_rule("quadrature")
    >>> (c.target_se, c.full_se_margin, c.margin_kind, c.min_items)
    (0.0, 0.1, 'quadrature', 15)
    >>> stop_rule("additive", target_se=0.3).target_se
    0.3
    """
    if rule not in STOP_RULES:
        raise ValueError(f"unknown stopping rule {rule!r}; expected one of {', '.join(STOP_RULES)}")
    base = STOP_RULES[rule]
    return replace(
        base,
        target_se=base.target_se if target_se is None else target_se,
        full_se_margin=base.full_se_margin if full_se_margin is None else full_se_margin,
        min_items=base.min_items if min_items is None else min_items,
    )


def rule_text(config: CatConfig) -> str:
    """The stopping rule of ``config`` in words (printed by ``irt cat``, noted in the study report).

    Examples
    --------
    >>> rule_text(stop_rule("quadrature"))
    'SE <= max(0, sqrt(full-test SE² + 0.1²)) (at least 15 items)'
    """
    parts = []
    if config.target_se is not None:
        m = config.full_se_margin
        if m is None:
            parts.append(f"SE <= {config.target_se:g}")
        elif config.margin_kind == "additive":
            parts.append(f"SE <= max({config.target_se:g}, full-test SE + {m:g})")
        else:
            parts.append(f"SE <= max({config.target_se:g}, sqrt(full-test SE² + {m:g}²))")
    if config.max_shift is not None:
        parts.append(f"predicted shift <= {config.max_shift:g}")
    text = " and ".join(parts) or "the budget"
    return text + (f" (at least {config.min_items} items)" if config.min_items > 1 else "")


def select_item(
    theta: ArrayLike,
    items: ItemParams,
    available: NDArray[np.bool_],
    randomesque: int = 1,
    rng: np.random.Generator | None = None,
) -> NDArray[np.intp]:
    """Next item per respondent: maximum information at ``theta`` among ``available``.

    Parameters
    ----------
    theta : array_like
        Shape ``(n,)``, current estimates.
    items : ItemParams
        The ``J`` items.
    available : ndarray of bool
        Shape ``(n, J)``: items that may still be given (each row needs one).
    randomesque : int
        Choose uniformly among the ``k`` most informative available items
        (Kingsbury & Zara 1989); needs ``rng`` when ``k > 1``.
    rng : numpy.random.Generator, optional
        Seeded generator for the randomesque draw.

    Returns
    -------
    ndarray of int
        Shape ``(n,)``, column index of the chosen item (ties: lowest index).
    """
    t = np.asarray(theta, dtype=np.float64).reshape(-1)
    avail = np.asarray(available, dtype=bool).reshape(t.size, len(items))
    if not avail.any(axis=1).all():
        raise ValueError("every respondent needs at least one available item")
    info = np.where(avail, item_information(t, items), -np.inf)
    if randomesque <= 1:
        out: NDArray[np.intp] = info.argmax(axis=1)
        return out
    if rng is None:
        raise ValueError("randomesque selection needs a seeded rng")
    order = np.argsort(-info, axis=1, kind="stable")
    k = np.minimum(randomesque, avail.sum(axis=1))
    pick = np.floor(rng.random(t.size) * k).astype(np.intp)
    chosen: NDArray[np.intp] = order[np.arange(t.size), pick]
    return chosen


def predicted_shift(se: ArrayLike, remaining_information: ArrayLike) -> FloatArray:
    r"""Predicted SD of the change of θ if every remaining item were given.

    With current posterior SD :math:`s_k` and the Fisher information
    :math:`R = \sum_{j \notin A_k} I_j(\hat\theta_k)` of the items not yet
    given, the full-test posterior SD is predicted as
    :math:`s_{full} \approx (s_k^{-2} + R)^{-1/2}` and, since the current
    estimate is the expectation of the final one (a martingale),

    .. math:: \operatorname{SD}(\hat\theta_{full} - \hat\theta_k)
              \approx \sqrt{s_k^2 - s_{full}^2}.

    Stopping when this is small is a variant of the predicted standard error
    reduction rule (Choi, Grady & Dodd 2011): it stops early both when the
    estimate is precise and when the remaining items cannot move it (a θ far
    outside the exam's range).

    References
    ----------
    Choi, S. W., Grady, M. W., & Dodd, B. G. (2011). A new stopping rule for
    computerized adaptive testing. *Educational and Psychological
    Measurement*, 71(1), 37-53.
    """
    s2 = np.asarray(se, dtype=np.float64) ** 2
    rest = np.asarray(remaining_information, dtype=np.float64)
    with np.errstate(divide="ignore"):
        full2 = 1.0 / (1.0 / s2 + rest)
    out: FloatArray = np.sqrt(np.maximum(s2 - full2, 0.0))
    return out


def _rules_hold(
    se: FloatArray, shift: FloatArray, target: FloatArray, config: CatConfig
) -> NDArray[np.bool_]:
    """Both configured stopping rules hold (element-wise); False when none is configured."""
    if config.target_se is None and config.max_shift is None:
        return np.zeros(np.shape(se), dtype=bool)
    ok = np.ones(np.shape(se), dtype=bool)
    if config.target_se is not None:
        ok &= se <= target
    if config.max_shift is not None:
        ok &= shift <= config.max_shift
    return ok


def _posterior(log_post: FloatArray, nodes: FloatArray) -> tuple[FloatArray, FloatArray]:
    """EAP mean and SD from an unnormalised log posterior on the grid, shape ``(n, G)``."""
    w = np.exp(log_post - log_post.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    mean = w @ nodes
    sd = np.sqrt(np.maximum(w @ nodes**2 - mean**2, 0.0))
    return mean, sd


@dataclass(frozen=True)
class CatTrace:
    """One adaptive test (live mode).

    Attributes
    ----------
    items : tuple of int
        Item indices in the order given.
    responses : tuple of bool
        The answers.
    theta, se : ndarray
        EAP θ and posterior SD after each item, shape ``(len(items),)``.
    stopped_by : {"rule", "budget", "exhausted"}
        ``"rule"``: the SE / shift rule; ``"budget"``: ``max_items``;
        ``"exhausted"``: no item left.
    """

    items: tuple[int, ...]
    responses: tuple[bool, ...]
    theta: FloatArray
    se: FloatArray
    stopped_by: StopReason

    @property
    def n_items(self) -> int:
        return len(self.items)


def run_cat(
    answer: Callable[[int], bool],
    items: ItemParams,
    config: CatConfig = DEFAULT_CONFIG,
    rng: np.random.Generator | None = None,
) -> CatTrace:
    """Live adaptive test: ask ``answer(j)`` only for the items selected.

    Parameters
    ----------
    answer : callable
        ``answer(item_index) -> bool`` (True = correct); the index is into
        ``items``. The caller plugs any respondent in (a model backend, a
        simulated examinee); this module does no I/O.
    items : ItemParams
        The item bank.
    config : CatConfig
        Stopping and exposure settings (``full_se_margin`` is ignored).
    rng : numpy.random.Generator, optional
        Needed when ``config.randomesque > 1``.

    Returns
    -------
    CatTrace
    """
    nodes = config.quadrature.nodes()
    log_post = np.log(config.quadrature.weights())[None, :].copy()
    p = np.clip(prob(nodes, items), EPS, 1.0 - EPS)  # (G, J)
    available = np.ones((1, len(items)), dtype=bool)
    budget = len(items) if config.max_items is None else min(config.max_items, len(items))
    theta, se = _posterior(log_post, nodes)
    given: list[int] = []
    answers: list[bool] = []
    thetas: list[float] = []
    ses: list[float] = []
    reason: StopReason = "exhausted"
    while available.any():
        j = int(select_item(theta, items, available, config.randomesque, rng)[0])
        correct = bool(answer(j))
        available[0, j] = False
        log_post[0] += np.log(p[:, j]) if correct else np.log1p(-p[:, j])
        theta, se = _posterior(log_post, nodes)
        given.append(j)
        answers.append(correct)
        thetas.append(float(theta[0]))
        ses.append(float(se[0]))
        rest = np.where(available, item_information(theta, items), 0.0).sum(axis=1)
        target = np.array([np.inf if config.target_se is None else config.target_se])
        if len(given) >= config.min_items and _rules_hold(se, predicted_shift(se, rest), target, config)[0]:
            reason = "rule"
            break
        if len(given) >= budget:
            reason = "budget" if available.any() else "exhausted"
            break
    return CatTrace(tuple(given), tuple(answers), np.array(thetas), np.array(ses), reason)

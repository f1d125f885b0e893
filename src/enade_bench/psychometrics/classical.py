"""Classical item analysis: discrimination index and attribute χ² tests.

References
----------
Kelley, T. L. (1939). The selection of upper and lower groups for the
validation of test items. *Journal of Educational Psychology*, 30(1), 17-24.

Ebel, R. L., & Frisbie, D. A. (1991). *Essentials of Educational
Measurement* (5th ed.). Prentice Hall (D < 0.2: poor discrimination).

Pearson, K. (1900). On the criterion that a given system of deviations ...
*Philosophical Magazine*, 50(302), 157-175.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

#: Discrimination below this is poor (Ebel & Frisbie 1991).
POOR_DISCRIMINATION = 0.2

_IMAGE = re.compile(
    r"(?:descri[çc][ãa]o\s+d[aeo]s?\s+[^:.]{1,40}:|fim\s+da\s+descri[çc][ãa]o|"
    r"description\s+of\s+[^:.]{1,40}:|image\s+description\s*:|description\s*:)",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d")


def discrimination_index(
    responses: pd.DataFrame,
    theta: ArrayLike,
    fraction: float = 0.25,
    threshold: float = POOR_DISCRIMINATION,
) -> pd.DataFrame:
    r"""Upper-lower discrimination index per item.

    Units (rows: respondents, or respondent × shuffle patterns) are ranked by
    θ; the top and bottom :math:`\lceil f\,n \rceil` form the groups
    (ties at the cut broken by row order). For item :math:`j`,

    .. math:: D_j = p_j^{top} - p_j^{bottom}

    the share correct among each group's units that took the item.

    Parameters
    ----------
    responses : DataFrame
        Units × items, 0/1/NaN; the columns are the item ids.
    theta : array_like
        One θ per unit.
    fraction : float
        Group size as a share of units (default 0.25).
    threshold : float
        ``poor`` is True where :math:`D < ` threshold (default 0.2).

    Returns
    -------
    DataFrame
        ``item_id, p_top, p_bottom, di, poor``.

    References
    ----------
    Kelley (1939); Ebel & Frisbie (1991).
    """
    t = np.asarray(theta, dtype=np.float64).reshape(-1)
    if t.size != len(responses):
        raise ValueError(f"{t.size} theta values for {len(responses)} response rows")
    if not 0 < fraction <= 0.5:
        raise ValueError(f"fraction must be in (0, 0.5]; got {fraction}")
    keep = np.isfinite(t)
    x = responses.to_numpy(dtype=np.float64)[keep]
    order = np.argsort(t[keep], kind="stable")
    size = int(np.ceil(fraction * order.size))
    bottom, top = x[order[:size]], x[order[order.size - size :]]
    with np.errstate(invalid="ignore"):
        p_top = np.nanmean(top, axis=0) if size else np.full(x.shape[1], np.nan)
        p_bottom = np.nanmean(bottom, axis=0) if size else np.full(x.shape[1], np.nan)
    di = p_top - p_bottom
    return pd.DataFrame(
        {
            "item_id": [str(c) for c in responses.columns],
            "p_top": p_top,
            "p_bottom": p_bottom,
            "di": di,
            "poor": di < threshold,
        }
    )


def item_attributes(
    questions: pd.DataFrame, stem: str = "body", options: Sequence[str] = ("A", "B", "C", "D", "E")
) -> pd.DataFrame:
    """Attributes detected from the item text.

    * ``image_description``: the stem carries an accessible-version image
      description ("Descrição da imagem:", "Description of the graph:",
      "(Fim da descrição)", ...).
    * ``numbers_in_options``: a digit appears in any option.
    * ``numbers_in_stem``: a digit appears in the stem.

    Returns
    -------
    DataFrame
        Same index as ``questions``; three boolean columns.
    """
    body = questions[stem].fillna("").astype(str)
    opts = [questions[o].fillna("").astype(str) for o in options if o in questions.columns]
    in_options = np.zeros(len(questions), dtype=bool)
    for col in opts:
        in_options |= col.str.contains(_NUMBER).to_numpy()
    return pd.DataFrame(
        {
            "image_description": body.str.contains(_IMAGE).to_numpy(),
            "numbers_in_options": in_options,
            "numbers_in_stem": body.str.contains(_NUMBER).to_numpy(),
        },
        index=questions.index,
    )


def attribute_tests(poor: ArrayLike, attributes: pd.DataFrame, yates: bool = False) -> pd.DataFrame:
    r"""χ² test of independence between poor discrimination and each attribute.

    For each attribute, the 2 × 2 table of counts :math:`O_{rs}` (poor / not
    × attribute / not) gives

    .. math:: X^2 = \sum_{r,s} \frac{(O_{rs} - E_{rs})^2}{E_{rs}}, \quad
              E_{rs} = \frac{O_{r\cdot} O_{\cdot s}}{n}, \quad X^2 \sim \chi^2_1

    (Pearson; ``yates=True`` subtracts 0.5 from each :math:`|O - E|`).

    Parameters
    ----------
    poor : array_like of bool
        One flag per item (:func:`discrimination_index`'s ``poor``).
    attributes : DataFrame
        One row per item (same order), boolean columns (:func:`item_attributes`).

    Returns
    -------
    DataFrame
        ``attribute, poor_with, poor_without, ok_with, ok_without, chi2, p_value,
        min_expected`` (NaN statistic when a margin is empty; the usual rule
        asks ``min_expected >= 5``).
    """
    flags = np.asarray(poor, dtype=bool).reshape(-1)
    if flags.size != len(attributes):
        raise ValueError(f"{flags.size} flags for {len(attributes)} attribute rows")
    rows = []
    for name in attributes.columns:
        attr = attributes[name].to_numpy(dtype=bool)
        table = np.array(
            [[np.sum(flags & attr), np.sum(flags & ~attr)], [np.sum(~flags & attr), np.sum(~flags & ~attr)]]
        )
        expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / max(table.sum(), 1)
        if (table.sum(axis=0) == 0).any() or (table.sum(axis=1) == 0).any():
            chi2, p = np.nan, np.nan
        else:
            res = stats.chi2_contingency(table, correction=yates)
            chi2, p = float(res.statistic), float(res.pvalue)
        rows.append(
            {
                "attribute": name,
                "poor_with": int(table[0, 0]),
                "poor_without": int(table[0, 1]),
                "ok_with": int(table[1, 0]),
                "ok_without": int(table[1, 1]),
                "chi2": chi2,
                "p_value": p,
                "min_expected": float(expected.min()),
            }
        )
    return pd.DataFrame(rows)

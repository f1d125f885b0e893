"""ENEM specifics: INEP item tables, booklet linking, foreign language, scale, file names.

* A booklet (``CO_PROVA``) lists one area's 45 items by position
  (``CO_POSICAO``); the booklets of one year and area hold the same items in
  different orders. LC booklets list positions 1-5 twice: the English
  (``TP_LINGUA = 0``) and the Spanish (``TP_LINGUA = 1``) foreign-language
  items; a candidate answers one set.
* Annulled items (``IN_ITEM_ABAN = 1``) and items without parameters are
  excluded from scoring.
* An exam file names its booklet as ``..._CO_PROVA_<code>.csv``; code 0 (the
  2023 files) means unknown, and :func:`~.linking.link_booklet` finds it by
  matching the answer key against the booklets of that year and area (the
  linking is in :mod:`.linking`).
* ENEM score = k·θ + d with INEP's per-area constants (:data:`ENEM_SCALE`).
* File names and record ids: :mod:`.files`.

References
----------
INEP (2021). *Entenda a sua nota no Enem: guia do participante*. Instituto
Nacional de Estudos e Pesquisas Educacionais Anísio Teixeira, Brasília.
INEP microdata item tables (``ITENS_PROVA_<year>.csv``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from enade_bench.errors import UserError
from enade_bench.psychometrics.irt import FloatArray, ItemParams

Language = Literal["english", "spanish"]


@dataclass(frozen=True)
class ScaleConstants:
    """Linear map from θ on the published item scale to the ENEM score."""

    k: float
    d: float


#: INEP's constants (``inep_scale_constants.csv``): score = k·θ + d.
ENEM_SCALE: dict[str, ScaleConstants] = {
    "CH": ScaleConstants(k=112.31, d=501.489),
    "CN": ScaleConstants(k=113.102, d=501.144),
    "LC": ScaleConstants(k=108.086, d=499.978),
    "MT": ScaleConstants(k=129.646, d=500.02),
}


def enem_score(theta: ArrayLike, area: str) -> FloatArray:
    r"""ENEM score :math:`k_{area}\,\theta + d_{area}`.

    Parameters
    ----------
    theta : array_like
        Abilities on the scale of INEP's published item parameters.
    area : {"CH", "CN", "LC", "MT"}
        ENEM area.

    Raises
    ------
    KeyError
        For an unknown area.
    """
    const = ENEM_SCALE[area.upper()]
    out: FloatArray = const.k * np.asarray(theta, dtype=np.float64) + const.d
    return out


def load_inep_items(path: str | Path) -> pd.DataFrame:
    """Read INEP's item table (``inep_items.csv``) with stable dtypes."""
    frame = pd.read_csv(path, dtype={"TX_GABARITO": str, "CO_ITEM": str})
    return frame


def load_booklets(path: str | Path) -> pd.DataFrame:
    """Read ``inep_booklets.csv`` (``area, ano, CO_PROVA, cor, aplicacao``)."""
    return pd.read_csv(path)


def booklet_items(
    inep_items: pd.DataFrame, co_prova: int, foreign_language: Language = "spanish"
) -> pd.DataFrame:
    """One booklet's items in position order, foreign language chosen.

    Parameters
    ----------
    inep_items : DataFrame
        INEP's item table (:func:`load_inep_items`).
    co_prova : int
        Booklet code.
    foreign_language : {"spanish", "english"}
        For LC, which foreign-language items (positions 1-5) to keep. The
        published LLM results use the Spanish set (``TP_LINGUA != 0``).

    Returns
    -------
    DataFrame
        Columns ``position, item_id, key, a, b, c, area, language, scored``;
        ``scored`` is False for annulled items and items without parameters.

    Raises
    ------
    KeyError
        If the booklet is not in the table.
    """
    rows = inep_items[inep_items["CO_PROVA"] == int(co_prova)]
    if rows.empty:
        raise KeyError(f"booklet CO_PROVA={co_prova} is not in the INEP item table")
    drop = 0 if foreign_language == "spanish" else 1
    lingua = rows["TP_LINGUA"]
    rows = rows[lingua.isna() | (lingua != drop)]
    rows = rows.drop_duplicates(subset=["CO_POSICAO", "TP_LINGUA"]).sort_values("CO_POSICAO", kind="stable")
    annulled = rows["IN_ITEM_ABAN"].fillna(0).astype(int) == 1
    has_params = rows[["NU_PARAM_A", "NU_PARAM_B"]].notna().all(axis=1)
    language = rows["TP_LINGUA"].map({0: "english", 1: "spanish"})
    return pd.DataFrame(
        {
            "position": rows["CO_POSICAO"].astype(int).to_numpy(),
            "item_id": rows["CO_ITEM"].astype(str).to_numpy(),
            "key": rows["TX_GABARITO"].astype(str).to_numpy(),
            "a": rows["NU_PARAM_A"].to_numpy(float),
            "b": rows["NU_PARAM_B"].to_numpy(float),
            "c": rows["NU_PARAM_C"].fillna(0.0).to_numpy(float),
            "area": rows["SG_AREA"].astype(str).to_numpy(),
            "language": language.to_numpy(dtype=object),
            "scored": (~annulled & has_params).to_numpy(),
        }
    )


def scored_params(booklet: pd.DataFrame) -> ItemParams:
    """:class:`ItemParams` of a booklet's scored items (annulled ones left out)."""
    return ItemParams.from_frame(booklet[booklet["scored"]])


def patterns_to_matrix(patterns: Sequence[str], booklet: pd.DataFrame) -> FloatArray:
    """0/1 response strings in booklet position order → matrix over the scored items.

    Each string has one character per row of ``booklet`` ('1', '0', or any
    other character for a missing answer). Columns follow
    :func:`scored_params`.

    Raises
    ------
    ValueError
        If a string's length differs from the booklet's item count.
    """
    n = len(booklet)
    out = np.full((len(patterns), n), np.nan)
    for row, text in enumerate(patterns):
        if len(text) != n:
            raise ValueError(f"pattern {row} has {len(text)} characters; the booklet has {n} items")
        chars = np.frombuffer(text.encode("ascii", "replace"), dtype=np.uint8)
        out[row] = np.where(chars == ord("1"), 1.0, np.where(chars == ord("0"), 0.0, np.nan))
    scored: FloatArray = out[:, booklet["scored"].to_numpy(bool)]
    return scored


def booklet_exams(folder: Path, codes: Sequence[int]) -> list[tuple[str, ItemParams]]:
    """``(label, scored items)`` of each booklet code, labelled ``AREA (code)``.

    Raises
    ------
    UserError
        A code that is not in INEP's item table.
    """
    inep = load_inep_items(folder / "inep_items.csv")
    out = []
    for code in codes:
        rows = inep[inep["CO_PROVA"] == code]
        if rows.empty:
            raise UserError(f"{folder / 'inep_items.csv'}: no booklet CO_PROVA={code}")
        out.append((f"{rows['SG_AREA'].iloc[0]} ({code})", scored_params(booklet_items(inep, code))))
    return out


def area_exams(folder: Path, year: int, areas: Sequence[str]) -> list[tuple[str, ItemParams]]:
    """``(area, scored items)`` of the first booklet with INEP parameters of each area in ``year``.

    The booklets of one area and year hold the same items, in other orders.

    Raises
    ------
    UserError
        An area without a booklet with parameters that year.
    """
    inep = load_inep_items(folder / "inep_items.csv")
    booklets = load_booklets(folder / "inep_booklets.csv")
    have = set(inep["CO_PROVA"].astype(int))
    out = []
    for area in areas:
        candidates = booklets[(booklets["ano"] == year) & (booklets["area"] == area)]["CO_PROVA"]
        known = sorted(int(c) for c in candidates if int(c) in have)
        if not known:
            raise UserError(f"{folder / 'inep_items.csv'}: no {area} {year} booklet with INEP parameters")
        out.append((area, scored_params(booklet_items(inep, known[0]))))
    return out

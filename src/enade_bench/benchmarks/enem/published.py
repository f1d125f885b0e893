"""The published LLM response patterns on ENEM (shared data), as one response matrix.

``reference_llm_responses_mirt.parquet`` holds 4,800 patterns on ENEM
2019-2022 booklets with R mirt's EAP θ and SE; the 2,400 on the 2019 and 2022
booklets have INEP parameters in ``inep_items.csv``. :func:`load_published`
joins them: item ids are ``<CO_PROVA>:<position>`` so all booklets share one
matrix in which each row is NaN outside its own booklet (LC: the Spanish
foreign-language set, ``TP_LINGUA != 0``, as the published scores).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from enade_bench.benchmarks.enem.inep import booklet_items, load_inep_items, patterns_to_matrix
from enade_bench.psychometrics.irt import FloatArray, ItemParams

PUBLISHED_FILE = "reference_llm_responses_mirt.parquet"


@dataclass(frozen=True)
class PublishedPatterns:
    """Published rows whose booklet has INEP parameters.

    Attributes
    ----------
    rows : DataFrame
        The parquet's rows (``CO_PROVA``, ``IRT_SCORE``, ``IRT_SCORE_SE``, …).
    items : ItemParams
        Every scored item of every booklet, ids ``<CO_PROVA>:<position>``.
    responses : ndarray
        Shape ``(len(rows), len(items))``, 1/0/NaN.
    """

    rows: pd.DataFrame
    items: ItemParams
    responses: FloatArray


def load_published(enem_dir: str | Path) -> PublishedPatterns:
    """Read the published patterns of the booklets in ``inep_items.csv``.

    Raises
    ------
    FileNotFoundError
        If ``inep_items.csv`` or the parquet file is missing.
    """
    folder = Path(enem_dir)
    inep = load_inep_items(folder / "inep_items.csv")
    ref = pd.read_parquet(folder / PUBLISHED_FILE)
    known = set(inep["CO_PROVA"].astype(str))
    ref = ref[ref["CO_PROVA"].astype(str).isin(known)].reset_index(drop=True)
    frames, blocks = [], []
    for code in sorted(ref["CO_PROVA"].astype(int).unique()):
        booklet = booklet_items(inep, code, "spanish")
        scored = booklet[booklet["scored"]].copy()
        scored["item_id"] = [f"{code}:{p}" for p in scored["position"]]
        frames.append(scored)
        rows = ref.index[ref["CO_PROVA"].astype(int) == code]
        blocks.append((rows, patterns_to_matrix(ref.loc[rows, "RESPONSE_PATTERN"].tolist(), booklet)))
    table = pd.concat(frames, ignore_index=True)
    items = ItemParams.from_frame(table)
    x = np.full((len(ref), len(items)), np.nan)
    start = 0
    for (rows, block), frame in zip(blocks, frames, strict=True):
        x[rows, start : start + len(frame)] = block
        start += len(frame)
    return PublishedPatterns(ref, items, x)


def published_long(enem_dir: str | Path) -> pd.DataFrame:
    """Every published pattern as long-format rows for ``enade-bench compare``.

    One row per model × run × item: ``model`` (``MODEL_NAME`` and ``MODEL_SIZE``),
    ``item`` (``<year>_<area>_<language>_<CO_PROVA>:<k>``, the pattern's k-th scored
    item: every model answered the same booklet of each year, area and language),
    ``replicate`` (the run, 0–29; runs differ by ``SEED`` at temperature 0.6),
    ``correct`` and the fields ``year``, ``area``, ``language``, ``booklet``.
    """
    ref = pd.read_parquet(Path(enem_dir) / PUBLISHED_FILE)
    size = ref["MODEL_SIZE"].fillna("").astype(str)
    ref = ref.assign(model=(ref["MODEL_NAME"].astype(str) + " " + size).str.strip())
    keys = ["model", "EXAM_YEAR", "EXAM_SUBJECT", "LANGUAGE"]
    ref["replicate"] = ref.sort_values([*keys, "ID"]).groupby(keys).cumcount()
    rows = []
    for r in ref.itertuples():
        prefix = f"{r.EXAM_YEAR}_{r.EXAM_SUBJECT}_{r.LANGUAGE}_{r.CO_PROVA}"
        for k, mark in enumerate(str(r.RESPONSE_PATTERN), start=1):
            rows.append(
                (
                    r.model,
                    f"{prefix}:{k:02d}",
                    r.replicate,
                    int(mark),
                    int(str(r.EXAM_YEAR)),
                    str(r.EXAM_SUBJECT),
                    str(r.LANGUAGE),
                    str(r.CO_PROVA),
                )
            )
    return pd.DataFrame(
        rows, columns=["model", "item", "replicate", "correct", "year", "area", "language", "booklet"]
    )

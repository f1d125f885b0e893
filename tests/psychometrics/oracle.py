"""The R oracle: published LLM patterns with mirt θ/SE and PerFit l_z, as one matrix."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from enade_bench.psychometrics.enem import booklet_items, patterns_to_matrix
from enade_bench.psychometrics.irt import ItemParams


@dataclass(frozen=True)
class Oracle:
    """The published rows whose booklet has INEP parameters, as one mixed-booklet matrix."""

    rows: pd.DataFrame
    items: ItemParams
    responses: np.ndarray


def load_oracle(enem_dir: Path, inep_items: pd.DataFrame) -> Oracle:
    """Every reference row of a booklet in ``inep_items.csv`` (LC: Spanish set, TP_LINGUA != 0).

    Item ids are ``<CO_PROVA>:<position>`` so that all booklets share one
    matrix in which each row has NaN outside its own booklet.
    """
    ref = pd.read_parquet(enem_dir / "reference_llm_responses_mirt.parquet")
    known = set(inep_items["CO_PROVA"].astype(str))
    ref = ref[ref["CO_PROVA"].astype(str).isin(known)].reset_index(drop=True)
    frames, blocks = [], []
    for code in sorted(ref["CO_PROVA"].astype(int).unique()):
        booklet = booklet_items(inep_items, code, "spanish")
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
    return Oracle(ref, items, x)

"""The R oracle: published LLM patterns with mirt θ/SE and PerFit l_z, as one matrix."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from enade_bench.benchmarks.enem.published import PublishedPatterns, load_published

#: The published rows whose booklet has INEP parameters, as one mixed-booklet matrix
#: (rows, items, responses); read by the package's own loader.
Oracle = PublishedPatterns


def load_oracle(enem_dir: Path, inep_items: pd.DataFrame) -> Oracle:
    """Every reference row of a booklet in ``inep_items.csv`` (LC: Spanish set, TP_LINGUA != 0).

    Item ids are ``<CO_PROVA>:<position>`` so that all booklets share one matrix in which
    each row has NaN outside its own booklet. ``inep_items`` is the table the fixture read
    (the loader reads the same file).
    """
    return load_published(enem_dir)

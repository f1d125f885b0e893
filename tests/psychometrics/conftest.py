"""Fixtures for the psychometrics tests: the R oracle and the INEP tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from tests.conftest import require_shared

from enade_bench.psychometrics.enem import load_inep_items

from .oracle import Oracle, load_oracle


@pytest.fixture(scope="session")
def enem_dir() -> Path:
    """``../shared/data/enem`` (skipped, or failed in CI, when absent)."""
    return require_shared("enem")


@pytest.fixture(scope="session")
def inep_items(enem_dir: Path) -> pd.DataFrame:
    return load_inep_items(enem_dir / "inep_items.csv")


@pytest.fixture(scope="session")
def oracle(enem_dir: Path, inep_items: pd.DataFrame) -> Oracle:
    """Every reference row of a booklet in ``inep_items.csv`` (see :func:`load_oracle`)."""
    return load_oracle(enem_dir, inep_items)

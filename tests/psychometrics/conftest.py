"""Fixtures for the psychometrics tests: the R oracle and the INEP tables."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from enade_bench.psychometrics.enem import load_inep_items

from .oracle import Oracle, load_oracle


@pytest.fixture(scope="session")
def enem_dir(shared_data: Path) -> Path:
    """``../shared/data/enem`` (the root ``shared_data`` fixture skips, or fails in CI, when absent)."""
    path = shared_data / "enem"
    if not path.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing in CI")
        pytest.skip(f"needs {path}; absent here")
    return path


@pytest.fixture(scope="session")
def inep_items(enem_dir: Path) -> pd.DataFrame:
    return load_inep_items(enem_dir / "inep_items.csv")


@pytest.fixture(scope="session")
def oracle(enem_dir: Path, inep_items: pd.DataFrame) -> Oracle:
    """Every reference row of a booklet in ``inep_items.csv`` (see :func:`load_oracle`)."""
    return load_oracle(enem_dir, inep_items)

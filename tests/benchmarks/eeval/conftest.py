"""Fixtures for the E-EVAL tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.conftest import require_shared


@pytest.fixture(scope="session")
def eeval_root() -> Path:
    """``../shared/data/eeval`` (skip where absent, fail in CI)."""
    return require_shared("eeval")


@pytest.fixture(scope="session")
def packaged_model(smollm2_backend: Any) -> Any:
    """The packaged SmolLM2-135M-Instruct, loaded once per session (shared with other tests)."""
    return smollm2_backend

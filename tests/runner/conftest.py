"""Put the loopback fakes on ``sys.path`` (tests import ``api_fakes``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backends" / "api"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

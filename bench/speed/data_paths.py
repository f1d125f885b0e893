"""Where the benchmark's default data lies: ``../shared/data`` beside the checkout."""

from __future__ import annotations

import os
from pathlib import Path


def shared_data(relative: str) -> str:
    """``relative`` (``../shared/data/…``) from the checkout's root, whatever the current folder.

    The benchmark's default data lies beside the checkout, and the benchmark runs only from
    a checkout (``bench/speed/`` is not installed), so it finds it from any folder.
    """
    root = Path(__file__).resolve().parents[2]
    return os.path.normpath(root / relative)

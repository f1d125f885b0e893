"""Where the benchmark's default data lies: ``../shared/data`` beside the checkout."""

from __future__ import annotations

import os
from pathlib import Path


def shared_data(relative: str) -> str:
    """``relative`` (``../shared/data/…``) from the checkout's root, whatever the current folder.

    The benchmark's default data lies beside the checkout; a package installed from a
    checkout (``pip install -e``) finds it from any folder. An installed package without
    a checkout reads it from the current folder, as before.
    """
    root = Path(__file__).resolve().parents[2]
    base = (
        root
        if (root / "pyproject.toml").is_file() and (root / "src" / "enade_bench").is_dir()
        else Path.cwd()
    )
    return os.path.normpath(base / relative)

"""The model cache's entries are usable by a group sharing the cache (issue 40)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from enade_bench.backends.model_cache import save_folder


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o755), (0o002, 0o775)])
def test_an_entry_gets_the_folder_permissions_of_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    previous = os.umask(umask)
    try:
        save_folder(tmp_path / "entry", ".tmp-", lambda folder: (folder / "model.json").write_text("{}"))
    finally:
        os.umask(previous)
    entry = tmp_path / "entry"
    assert stat.S_IMODE(entry.stat().st_mode) == mode  # not mkdtemp's 0700
    assert stat.S_IMODE((entry / "model.json").stat().st_mode) == 0o666 & ~umask

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


def test_umask_077_in_a_shared_cache_is_warned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 51 (unclear case decided): the entry is private, as the umask asks, but not silently."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o2775)  # a group's cache folder
    previous = os.umask(0o077)
    try:
        save_folder(shared / "entry", ".tmp-", lambda folder: (folder / "model.json").write_text("{}"))
        save_folder(tmp_path / "own" / "entry", ".tmp-", lambda folder: None)  # mkdir under 077: private
    finally:
        os.umask(previous)
    assert stat.S_IMODE((shared / "entry").stat().st_mode) == 0o700
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"warning: {shared / 'entry'}: made readable by its owner alone (umask 077), in a cache folder its "
        "group can read: the others sharing the cache cannot use it (umask 022 or 002 shares it)"
    ]


def test_a_cache_made_private_by_the_umask_is_warned_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 61: under umask 077 a new ENADE_BENCH_CACHE is private from its first folder: said once."""
    monkeypatch.setenv("ENADE_BENCH_CACHE", str(tmp_path / "cache"))
    previous = os.umask(0o077)
    try:
        for name in ("a", "b"):
            save_folder(tmp_path / "cache" / "models" / name, ".tmp-", lambda folder: None)
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "cache" / "models").stat().st_mode) == 0o700
    assert capsys.readouterr().err.splitlines() == [
        f"warning: {tmp_path / 'cache' / 'models' / 'a'}: made readable by its owner alone (umask 077), in the "
        "cache ENADE_BENCH_CACHE names: the others sharing the cache cannot use it (umask 022 or 002 shares it)"
    ]

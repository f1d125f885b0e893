"""The model cache (``$ENADE_BENCH_CACHE``, default ``~/.cache/enade_bench``): where converted
GGUF models, tokenizers and file hashes are kept, and how several processes share it.

Several processes may fill the same entry at once (pytest-xdist workers, a study's Ray
workers, two runs): an entry is made under :func:`cache_lock` and saved with
:func:`save_folder` (a temporary folder renamed over the target), so a reader sees a whole
entry or none.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from enade_bench.dataset.sources import file_sha256 as stream_sha256
from enade_bench.regular_file import read_text
from enade_bench.results.lock import waiting_lock
from enade_bench.results.safe_write import process_umask


def cache_root() -> Path:
    return Path(os.environ.get("ENADE_BENCH_CACHE", Path.home() / ".cache" / "enade_bench"))


def file_sha256(path: Path) -> str:
    """sha256 of a file, memoised in the cache by (path, size, mtime)."""
    stat = path.stat()
    key = hashlib.sha256(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()
    memo = cache_root() / "hashes" / key
    if memo.exists() and len(known := read_text(memo).strip()) == 64:
        return known
    value = stream_sha256(path)
    memo.parent.mkdir(parents=True, exist_ok=True)
    tmp = memo.with_name(f"{memo.name}.{os.getpid()}.tmp")  # readers in other processes never see half
    tmp.write_text(value)
    os.replace(tmp, memo)
    return value


@contextmanager
def cache_lock(target: Path) -> Iterator[None]:
    """Hold ``target``'s cache entry exclusively across processes while it is made.

    Several processes may load the same GGUF at once (pytest-xdist workers, a study's Ray
    workers, two runs): the first converts, the others wait and then read its folder. The
    lock is :func:`~enade_bench.results.lock.waiting_lock` on ``TARGET.lock`` (``flock``),
    released by the kernel if the holder dies.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    with waiting_lock(target.with_name(target.name + ".lock")):
        yield


_warned_private: set[Path] = set()


def save_folder(target: Path, prefix: str, save: Callable[[Path], object]) -> None:
    """``save`` into a temporary folder beside ``target``, then rename it over ``target``.

    The entry gets the permissions a folder made with ``mkdir`` would (``drwxr-xr-x`` under
    umask ``022``, group-writable under ``002``), not ``mkdtemp``'s ``drwx------``: a cache
    shared by a group (``ENADE_BENCH_CACHE`` on a cluster) is readable by its members.  A
    umask that hides the entry from a group the cache's folder is open to (``077``), or from
    everyone but its owner in a cache named by ``ENADE_BENCH_CACHE`` (one made under that
    umask is private from its first folder, issue 61), is said in one ``warning:`` line, once
    per folder.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    mask = process_umask()
    where = (
        "a cache folder its group can read"
        if os.stat(target.parent).st_mode & 0o050
        else "the cache ENADE_BENCH_CACHE names"
        if "ENADE_BENCH_CACHE" in os.environ and target.is_relative_to(cache_root())
        else None
    )
    if mask & 0o050 == 0o050 and where is not None and target.parent not in _warned_private:
        _warned_private.add(target.parent)
        print(
            f"warning: {target}: made readable by its owner alone (umask {mask:03o}), in {where}: the "
            "others sharing the cache cannot use it (umask 022 or 002 shares it)",
            file=sys.stderr,
        )
    tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=target.parent))
    try:
        os.chmod(tmp, 0o777 & ~mask)
        save(tmp)
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise

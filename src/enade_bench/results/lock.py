"""One process at a time on a run's files: ``{stem}.lock`` beside them, held with ``flock``.

A run takes the lock of every strategy it will write before its model loads and
holds it to the end, so a second process on the same files (a second ``run``, a
``--no-resume`` that would wipe the log of a live run) is refused with one
``error:`` line naming the holder: PID, host, start time and command, which the
holder writes into the lock file. The kernel drops an ``flock`` when its process
dies, however it dies; a lock file left behind by a killed run is therefore taken
over, and the takeover is logged (a ``warning:`` line naming the former holder).
A finished run removes its lock files.

A lock file with other names (a hard link to a file elsewhere, a ``cp -al`` copy of the
folder) is never written: once it is locked, a new lock file of its own is put in its place
(locked before it is renamed there), so the other names keep their content.

The model cache's entries are locked the same way (:func:`waiting_lock`), except that a
second process waits for the holder instead of being refused, and the lock file stays.

Run locks are re-entrant within a process (the command line takes them before the
model loads, the runner again around the work). Where ``fcntl`` does not exist
(Windows) runs are not locked.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import socket
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from enade_bench.errors import UserError
from enade_bench.masking import scrub
from enade_bench.results.safe_write import folder_of
from enade_bench.results.writable import os_reason

log = logging.getLogger(__name__)

#: Lock files this process holds: resolved path -> (open descriptor, depth).
_HELD: dict[Path, tuple[int, int]] = {}


def _holder_info() -> dict[str, object]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": dt.datetime.now(dt.UTC).astimezone().isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
    }


def describe_holder(text: str) -> str:
    """``PID 123 on host since 2026-…`` from a lock file's content (what is known of it)."""
    try:
        info = json.loads(text)
    except json.JSONDecodeError:
        info = None
    if not isinstance(info, dict):
        return "an unknown process"
    where = f"PID {info.get('pid')} on {info.get('host')} since {info.get('started')}"
    return where + (f" ({info['command']})" if info.get("command") else "")


def _read(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


def _acquire(path: Path, wait: bool = False) -> int:
    """Open and lock ``path``; the descriptor. Held: ``wait`` for it, else a UserError naming the holder."""
    import fcntl  # noqa: PLC0415 (POSIX only; callers skip locking without it)

    while True:
        try:
            folder_of(path)  # a real folder below the output folder (never a linked one)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)  # never through a link
        except OSError as exc:
            if path.is_symlink():
                raise UserError(
                    f"{path}: a symbolic link where the run's lock file goes; a lock is never taken "
                    "through a link: remove the link"
                ) from None
            raise UserError(f"{path}: cannot create the run's lock file ({os_reason(exc)})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = describe_holder(_read(fd))
            os.close(fd)
            raise UserError(
                f"{path}: these files are in use by {holder}; wait for it to finish "
                "(or stop it), or choose another output.dir / --output-dir / --out"
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return _own_file(path, fd) if os.fstat(fd).st_nlink > 1 else fd
        os.close(fd)  # the holder removed the file as we opened it: take the new one


def _own_file(path: Path, fd: int) -> int:
    """A new lock file, locked, renamed over ``path`` (which has other names); its descriptor.

    ``fd`` (the shared file, locked by us) is closed after the rename: a process waiting on
    it then sees another file at ``path`` and takes that one (which we hold).
    """
    import fcntl  # noqa: PLC0415 (POSIX only)

    try:
        new, tmp = tempfile.mkstemp(prefix=f".{path.name[:100]}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        os.close(fd)
        raise UserError(f"{path}: cannot create the run's lock file ({os_reason(exc)})") from None
    fcntl.flock(new, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file: nobody else holds it
    os.fchmod(new, 0o644)
    os.replace(tmp, path)
    os.close(fd)
    print(
        f"warning: {path}: the lock file had other names (a hard link); a lock file of its own "
        "replaced it, the other names keep their content",
        file=sys.stderr,
    )
    return new


def _take(path: Path, taken: list[tuple[str, Path]]) -> int:
    fd = _acquire(path)
    stale = _read(fd).strip()
    if stale:  # a holder that died without removing its lock: the kernel freed it
        taken.append((describe_holder(stale), path))
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, (scrub(json.dumps(_holder_info())) + "\n").encode())  # the command line may hold a key
    os.fsync(fd)
    return fd


def _report_takeovers(taken: list[tuple[str, Path]]) -> None:
    """One ``warning:`` line per former holder, however many of its lock files were taken over."""
    by_holder: dict[str, list[Path]] = {}
    for holder, path in taken:
        by_holder.setdefault(holder, []).append(path)
    for holder, paths in by_holder.items():
        more = f" and {len(paths) - 1} more beside it" if len(paths) > 1 else ""
        message = f"took over {len(paths)} lock(s) of a run that is gone ({holder}): {paths[0]}{more}"
        log.info(message)
        print(f"warning: {message}", file=sys.stderr)


@contextmanager
def _held(path: Path, taken: list[tuple[str, Path]] | None = None) -> Iterator[None]:
    key = path.resolve()
    if key in _HELD:
        fd, depth = _HELD[key]
        _HELD[key] = (fd, depth + 1)
    else:
        own = [] if taken is None else taken
        _HELD[key] = (_take(path, own), 1)
        if taken is None:
            _report_takeovers(own)
    try:
        yield
    finally:
        fd, depth = _HELD[key]
        if depth > 1:
            _HELD[key] = (fd, depth - 1)
        else:
            del _HELD[key]
            path.unlink(missing_ok=True)  # before unlocking: a waiter re-checks the inode
            os.close(fd)


@contextmanager
def waiting_lock(path: Path) -> Iterator[None]:
    """Hold the lock file ``path`` for the block, waiting for a holder to let go; the file stays."""
    try:
        import fcntl  # noqa: F401, PLC0415
    except ImportError:  # pragma: no cover (Windows)
        yield
        return
    fd = _acquire(path, wait=True)
    try:
        yield
    finally:
        os.close(fd)


@contextmanager
def run_lock(paths: Sequence[Path]) -> Iterator[None]:
    """Hold the lock files ``paths`` (all or none) for the duration of the block."""
    try:
        import fcntl  # noqa: F401, PLC0415
    except ImportError:  # pragma: no cover (Windows)
        yield
        return
    with ExitStack() as stack:
        taken: list[tuple[str, Path]] = []
        for path in sorted(set(paths)):
            stack.enter_context(_held(path, taken))
        _report_takeovers(taken)
        yield

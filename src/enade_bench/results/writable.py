"""Check output paths before any work starts, and say why a write failed.

Every command that writes checks its output folder (or file) first, so a path
that cannot be written is one ``error:`` line naming the key (``output.dir``,
``--output-dir``, ``--out``) and the path, exit 2, *before* the model loads or
the computation starts, never a traceback after the answers are computed.

The check leaves the file system as it found it: when the folder exists, a
probe file is written in it and removed; when it does not, its nearest existing
ancestor must be a writable folder (probed the same way), and nothing is
created (the run creates the folder when it first writes).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from enade_bench.errors import UserError, as_given

PROBE_PREFIX = ".enade-bench-probe-"


def os_reason(exc: OSError) -> str:
    """The reason of an ``OSError`` in words (``strerror``, else its message, else its type)."""
    return exc.strerror or str(exc) or type(exc).__name__


def _probe(folder: Path) -> None:
    """Write and remove a small file in ``folder``; ``OSError`` if that fails."""
    fd, name = tempfile.mkstemp(prefix=PROBE_PREFIX, suffix=".tmp", dir=folder)
    try:
        os.write(fd, b"probe\n")
    finally:
        os.close(fd)
        Path(name).unlink(missing_ok=True)


def _nearest_existing(path: Path) -> Path:
    """``path`` or its nearest ancestor that exists (``.`` for a relative path)."""
    for candidate in (path, *path.parents):
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return Path(path.anchor or ".")


def _check_folder(folder: Path, prefix: str) -> None:
    """Raise ``UserError`` (message starting with ``prefix``) unless ``folder`` is or can be made writable.

    Paths are checked as written (``a/../b`` needs ``a``, as the operating system does).
    """
    try:
        existing = _nearest_existing(folder)
        if existing.is_symlink() and not existing.exists():
            raise UserError(f"{prefix}'{as_given(existing)}' is a broken symbolic link (expected a folder)")
        if not existing.is_dir():
            if existing == folder:
                raise UserError(f"{prefix}'{as_given(folder)}' is a file, not a folder")
            raise UserError(
                f"{prefix}cannot create folder '{as_given(folder)}': '{as_given(existing)}' is a file, not a folder"
            )
        try:
            _probe(existing)
        except OSError as exc:
            if existing == folder:
                raise UserError(
                    f"{prefix}cannot write in folder '{as_given(folder)}' ({os_reason(exc)})"
                ) from None
            raise UserError(
                f"{prefix}cannot create folder '{as_given(folder)}': cannot write in '{as_given(existing)}' ({os_reason(exc)})"
            ) from None
    except OSError as exc:  # e.g. a name too long for the file system
        raise UserError(f"{prefix}'{as_given(folder)}' is not a usable folder ({os_reason(exc)})") from None


def check_output_dir(path: Path | str, key: str) -> None:
    """Raise ``UserError`` unless ``path`` is, or can be created as, a writable folder.

    Parameters
    ----------
    path
        The output folder (relative paths are relative to the current directory).
    key
        What the user set, for the message: ``output.dir`` (with the config file),
        ``--output-dir``, ``--out``.
    """
    _check_folder(Path(path), f"{key}: ")


def check_output_file(path: Path | str, key: str, *, create_parent: bool = True) -> None:
    """Raise ``UserError`` unless the file ``path`` can be written (atomically, beside itself).

    Parameters
    ----------
    path
        The file to write; an existing file will be replaced.
    key
        The option that named it, e.g. ``--out``.
    create_parent
        Whether a missing folder will be created by the writer (otherwise a
        missing folder is an error).
    """
    target = Path(path)
    prefix = f"{key}: cannot write '{target}': "
    try:
        if target.is_dir():
            raise UserError(f"{key}: '{target}' is a folder (expected a file name)")
        parent = target.parent
        if not create_parent and not (parent.exists() or parent.is_symlink()):
            raise UserError(f"{prefix}folder '{parent}' does not exist (create it first)")
    except OSError as exc:
        raise UserError(f"{prefix}not a usable file name ({os_reason(exc)})") from None
    _check_folder(parent, prefix)

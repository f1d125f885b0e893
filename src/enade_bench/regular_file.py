"""Files opened for reading are regular files, checked without blocking (issue 51).

A FIFO opened for reading blocks until a writer comes (``validate`` then ignores SIGTERM:
the process sits in ``open``); a device such as ``/dev/zero`` never ends.  Every file the
project reads (config, data, prompts, results, logs, the model cache) is opened here:
``O_NONBLOCK`` makes the ``open`` return at once, ``fstat`` on the opened descriptor says
what it is (after following symbolic links, as the Hugging Face cache is made of them),
and anything but a regular file is a :class:`NotRegularFile` (an :class:`OSError`, so the
callers' ``except OSError`` name the path).  No race: the check is on the file opened.

Layer 0: imports nothing from the package.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

__all__ = ["NotRegularFile", "check_regular", "open_regular", "read_bytes", "read_text"]


class NotRegularFile(OSError):
    """A path that is a FIFO, a socket, a device or a folder where a file is read."""

    def __init__(self, path: Path | str, mode: int) -> None:
        kind = (
            "a FIFO (named pipe)"
            if stat.S_ISFIFO(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a folder"
            if stat.S_ISDIR(mode)
            else "not a regular file"
        )
        super().__init__(errno.EINVAL, f"not a regular file: {kind}; expected a file", str(path))
        self.kind = kind

    def __str__(self) -> str:
        return f"{self.filename}: not a regular file ({self.kind}); expected a file"


def check_regular(path: Path | str) -> None:
    """Raise :class:`NotRegularFile` unless ``path`` (links followed) is a regular file.

    For files a library opens itself (``tokenizers``, ``transformers``); a missing file is
    the library's to report.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode):
        raise NotRegularFile(path, mode)


def open_regular(path: Path | str) -> BinaryIO:
    """``path`` opened for reading in binary, refused (never blocking) unless a regular file."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, mode)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: Path | str) -> bytes:
    """The whole content of the regular file ``path`` (:func:`open_regular`)."""
    with open_regular(path) as handle:
        return handle.read()


def read_text(path: Path | str, encoding: str = "utf-8", errors: str = "strict") -> str:
    """:func:`read_bytes` decoded (``utf-8-sig`` drops a BOM); universal newlines as ``Path.read_text``."""
    text = read_bytes(path).decode(encoding, errors)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text

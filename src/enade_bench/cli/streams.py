"""Standard output that cannot fail with a traceback (issue 51).

* A terminal or a pipe that cannot encode Portuguese (``PYTHONIOENCODING=ascii``, a C
  locale, whose streams use ``surrogateescape``) gets an escape (``\\xe3``) for what it
  cannot show, as does a lone surrogate anywhere, never a ``UnicodeEncodeError``: stdout and
  stderr are reconfigured with ``errors="backslashreplace"`` whatever their handler (issue 61).
* A failed write to stdout (``>/dev/full``, a closed pipe) is an :class:`OSError` naming
  ``standard output``, which the command line prints as its one ``error:`` line.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

#: The name a failed write to stdout is reported under.
STDOUT = "standard output"


class NamedStdout:
    """``sys.stdout`` whose write errors name :data:`STDOUT`."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        try:
            return self.inner.write(text)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, STDOUT) from None

    def flush(self) -> None:
        try:
            self.inner.flush()
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, STDOUT) from None

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno… of the wrapped stream
        return getattr(self.inner, name)


#: Error handlers that write something for every character (``surrogateescape`` raises on most).
_LOSSLESS = ("backslashreplace", "namereplace", "xmlcharrefreplace")


def _replace_unencodable(stream: Any) -> None:
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None and getattr(stream, "errors", _LOSSLESS[0]) not in _LOSSLESS:
        try:
            reconfigure(errors="backslashreplace")
        except (ValueError, OSError):  # a stream that cannot be reconfigured: left as it is
            pass


@contextmanager
def safe_stdout() -> Iterator[None]:
    """Within the block: stdout and stderr replace what they cannot encode, and stdout's
    write errors name it; stdout is flushed at the end (its error raised there, named)."""
    for stream in (sys.stdout, sys.stderr):
        _replace_unencodable(stream)
    current = sys.stdout
    if isinstance(current, NamedStdout):
        yield
        return
    sys.stdout = NamedStdout(current)  # type: ignore[assignment]
    try:
        yield
        sys.stdout.flush()
    finally:
        if isinstance(sys.stdout, NamedStdout):
            sys.stdout = current

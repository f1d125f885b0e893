"""stderr through the same check as every file: :class:`ScrubbedStream`.

The command line wraps ``sys.stderr`` in it for the duration of a command, so every
``warning:``, ``retry:`` and ``error:`` line, whoever prints it, goes through
:func:`enade_bench.masking.scrub`: a line that holds a remembered secret in any decoded
form is withheld whole, credentials shown by their shape are masked, and control
characters (NUL, ESC, a line break inside a name) are written as escapes.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from enade_bench.masking import scrub

#: Where a line ends (kept with the line: ``\n``, or the ``\r`` of a progress bar).
_LINE_END = re.compile(r"(?<=[\n\r])")


def _printable(line: str) -> str:
    """``line`` with control characters but the tab escaped (a NUL or an ESC from a name never
    reaches the terminal raw)."""
    if line.isprintable() or not any(ord(c) < 32 or 127 <= ord(c) < 160 for c in line if c != "\t"):
        return line
    return "".join(
        c.encode("unicode_escape").decode("ascii")
        if (ord(c) < 32 or 127 <= ord(c) < 160) and c != "\t"
        else c
        for c in line
    )


class ScrubbedStream:
    """A text stream that writes whole lines to ``inner``, each passed through ``scrub``."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self._pending = ""
        self._lock = threading.Lock()

    def write(self, text: str) -> int:

        with self._lock:
            *lines, self._pending = _LINE_END.split(self._pending + text)
            for line in lines:
                body = line.rstrip("\r\n")
                self.inner.write(_printable(scrub(body)) + line[len(body) :])
        return len(text)

    def close_line(self) -> None:
        """Write what is left of an unfinished line (scrubbed)."""

        with self._lock:
            if self._pending:
                self.inner.write(_printable(scrub(self._pending)))
                self._pending = ""
        self.inner.flush()

    def flush(self) -> None:
        self.inner.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno… of the wrapped stream
        return getattr(self.inner, name)


@contextmanager
def scrubbed_stderr() -> Iterator[ScrubbedStream]:
    """``sys.stderr`` is a :class:`ScrubbedStream` within the block (nested blocks share one)."""
    current = sys.stderr
    if isinstance(current, ScrubbedStream):
        yield current
        return
    stream = ScrubbedStream(current)
    sys.stderr = stream  # type: ignore[assignment]
    try:
        yield stream
    finally:
        stream.close_line()
        if sys.stderr is stream:
            sys.stderr = current

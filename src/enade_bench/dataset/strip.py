"""``dataset.strip``: texts or regular expressions removed from every stem and option.

For the commonest debris of a PDF-made file, a page footer or header glued to the text
(``2023 SEGUNDA EDIÇÃO``, ``ÁREA LIVRE``), which :mod:`enade_bench.dataset.lint` flags.
Each entry is a text, removed wherever it occurs with any white space between its words
(the lint quotes ``2023 SEGUNDA EDIÇÃO`` for a footer written ``2023`` + 8 spaces +
``SEGUNDA EDIÇÃO``, and the quoted text removes it), or ``{regex: …}``, whose every match
is removed; then runs of white space left behind are one space and the text is trimmed.
The entries are part of the config, so the results record them, and the loader counts
the texts changed (``stripped`` in the dataset counts).  No I/O but one warning line
(:func:`compile_pattern`).

A ``{regex: …}`` entry runs under the ``regex`` module with a time bound
(:data:`TIMEOUT_S` for every text of the load together, issue 61): a pattern that
backtracks without end (``(a|aa)+$``), on one long text or on many short ones, stops the
load with one ``error:`` line naming it, never a hang.  Python's ``re`` has no bound.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Sequence

import regex

from enade_bench.errors import UserError

__all__ = ["TIMEOUT_S", "PatternTimeout", "Stripper", "compile_pattern", "literal"]

#: Longest the ``{regex: …}`` entries may search all the texts of one load together, in seconds.
TIMEOUT_S = 2.0

_SPACES = re.compile(r"[ \t]{2,}")


def literal(text: str) -> re.Pattern[str]:
    """A text to remove, its words separated by any run of white space."""
    words = text.split()
    return re.compile(r"\s+".join(map(re.escape, words)) if words else re.escape(text))


_warned: set[str] = set()


class PatternTimeout(UserError):
    """A ``{regex: …}`` entry ran out of time: the whole load stops (not one row)."""


def compile_pattern(text: str) -> regex.Pattern[str]:
    """A ``{regex: …}`` entry, compiled for :class:`Stripper` (searched with a time bound).

    A pattern that matches the lone space between two words (``\\s``, `` +``) would glue
    every word of every text together: one ``warning:`` line says so (once per pattern).
    """
    pattern = regex.compile(text)
    if text not in _warned and any(pattern.fullmatch(gap, timeout=TIMEOUT_S) for gap in (" ", "\n", "\t")):
        _warned.add(text)
        print(
            f"warning: dataset.strip: the pattern '{text}' matches the lone space between two words: "
            "every such space is removed, gluing the words together (match the debris itself, e.g. "
            "'P[aá]gina \\d+')",
            file=sys.stderr,
        )
    return pattern


class Stripper:
    """Removes the configured texts and patterns; :attr:`changed` counts the texts it changed.

    The order of the entries does not matter: texts are removed longest first (a footer that
    holds another, ``ÁREA LIVRE 2023 SEGUNDA EDIÇÃO`` and ``2023 SEGUNDA EDIÇÃO``, goes whole), then
    the patterns, and again until nothing changes (what one removal uncovers is removed too).
    """

    def __init__(self, entries: Sequence[str | re.Pattern[str] | regex.Pattern[str]]) -> None:
        texts = sorted((e for e in entries if isinstance(e, str)), key=lambda e: -len(" ".join(e.split())))
        self.patterns = [*map(literal, texts), *(e for e in entries if not isinstance(e, str))]
        self.changed = 0
        self.searched = 0  # texts the patterns searched
        self.left = TIMEOUT_S  # seconds of regex search left to this load

    def _sub(self, pattern: re.Pattern[str] | regex.Pattern[str], text: str) -> str:
        if not isinstance(pattern, regex.Pattern):
            return pattern.sub("", text)
        self.searched += 1
        started = time.monotonic()
        try:
            return pattern.sub("", text, timeout=max(self.left, 1e-3))
        except TimeoutError:
            raise PatternTimeout(
                f"dataset.strip: the pattern '{pattern.pattern}' took over {TIMEOUT_S:g} s on {self.searched} "
                f"text(s) (this one {len(text)} characters; a nested quantifier such as (a+)+ or (a|aa)+ "
                "backtracks without end); write it without one"
            ) from None
        finally:
            self.left -= time.monotonic() - started

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def __call__(self, text: str) -> str:
        """``text`` without the entries' matches (unchanged when none matches)."""
        out, last = text, None
        while out != last:
            last = out
            for pattern in self.patterns:
                out = self._sub(pattern, out)
        if out == text:
            return text
        self.changed += 1
        return _SPACES.sub(" ", out).strip()

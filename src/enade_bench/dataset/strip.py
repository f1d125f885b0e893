"""``dataset.strip``: texts or regular expressions removed from every stem and option.

For the commonest debris of a PDF-made file, a page footer or header glued to the text
(``2023 SEGUNDA EDIÇÃO``, ``ÁREA LIVRE``), which :mod:`enade_bench.dataset.lint` flags.
Each entry is a text, removed wherever it occurs with any white space between its words
(the lint quotes ``2023 SEGUNDA EDIÇÃO`` for a footer written ``2023`` + 8 spaces +
``SEGUNDA EDIÇÃO``, and the quoted text removes it), or ``{regex: …}``, whose every match
is removed; then runs of white space left behind are one space and the text is trimmed.
The entries are part of the config, so the results record them, and the loader counts
the texts changed (``stripped`` in the dataset counts).  Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["Stripper", "literal"]

_SPACES = re.compile(r"[ \t]{2,}")


def literal(text: str) -> re.Pattern[str]:
    """A text to remove, its words separated by any run of white space."""
    words = text.split()
    return re.compile(r"\s+".join(map(re.escape, words)) if words else re.escape(text))


class Stripper:
    """Removes the configured texts and patterns; :attr:`changed` counts the texts it changed."""

    def __init__(self, entries: Sequence[str | re.Pattern[str]]) -> None:
        self.patterns = [e if isinstance(e, re.Pattern) else literal(e) for e in entries]
        self.changed = 0

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def __call__(self, text: str) -> str:
        """``text`` without the entries' matches (unchanged when none matches)."""
        out = text
        for pattern in self.patterns:
            out = pattern.sub("", out)
        if out == text:
            return text
        self.changed += 1
        return _SPACES.sub(" ", out).strip()

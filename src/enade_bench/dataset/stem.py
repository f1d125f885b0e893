"""A stem composed from several fields of a row (``dataset.stem``), config-only.

Some files split a question's text: ENEM 2025's third-party release has a ``context`` (the
text or figure caption the item is about), a ``question`` and an ``image_description``.
``dataset.stem`` says how to put them together:

* a list of parts, each a column name (``context``) or a template (``'Imagem: {image_description}'``);
* or one template whose parts are separated by blank lines (``"{context}\\n\\n{question}"``).

Parts are joined with a blank line; a column holding a list of texts is its texts joined the
same way.  The first of two or more parts is the row's context: the lint
(:mod:`~enade_bench.dataset.lint_context`) looks for stems that point at it when it is empty
or only a title.  A part whose columns are all empty in a row is left
out (so an empty ``context`` leaves no stray blank line, and a label such as ``Imagem:``
is not printed alone).  Pure: no I/O.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence

from enade_bench.errors import UserError

__all__ = ["StemTemplate"]

_NAME = re.compile(r"^[^{}\s]+$")
#: The longest context read as only a title, and what a title does not hold: a sentence's end.
TITLE = 120
_SENTENCE = re.compile(r"[.!?](?:\s|$)")
_BLANK_LINES = re.compile(r"\n\s*\n")


def _fields(part: str) -> list[str]:
    try:
        return [name for _, name, _, _ in string.Formatter().parse(part) if name is not None]
    except ValueError as exc:
        raise UserError(
            f"dataset.stem: '{part}' is not a template ({exc}); write {{column}} for a column"
        ) from None


class StemTemplate:
    """The parts of ``dataset.stem`` and the columns they read."""

    def __init__(self, spec: str | Sequence[str]) -> None:
        raw = _BLANK_LINES.split(spec) if isinstance(spec, str) else list(spec)
        self.parts = [f"{{{p.strip()}}}" if _NAME.match(p.strip()) else p.strip() for p in raw if p.strip()]
        if not self.parts:
            raise UserError("dataset.stem: no part (name the columns, e.g. [context, question])")
        self.columns: list[str] = []
        #: The columns each part reads, parsed once (not once a row).
        self.part_columns = [_fields(part) for part in self.parts]
        for part, names in zip(self.parts, self.part_columns, strict=True):
            if not names or any(not n or n.isdigit() or "." in n or "[" in n for n in names):
                raise UserError(
                    f"dataset.stem: part '{part}' names no column (write a column name, or {{column}} inside a text)"
                )
            self.columns += [n for n in names if n not in self.columns]

    def context_lost(self, cell: Callable[[str], str]) -> bool:
        """Whether the first of two or more parts (the context) is empty in a row, or only a title (at
        most :data:`TITLE` characters and no sentence: ``Texto I``): for the lint."""
        if len(self.parts) < 2:
            return False
        text = " ".join(cell(name).strip() for name in self.part_columns[0]).strip()
        return len(text) <= TITLE and not _SENTENCE.search(text)

    def render(self, cell: Callable[[str], str]) -> str:
        """The stem of one row; ``cell(name)`` gives a column's text."""
        out = []
        for part, names in zip(self.parts, self.part_columns, strict=True):
            values = {name: cell(name).strip() for name in names}
            if any(values.values()):
                out.append(part.format_map(values).strip())
        return "\n\n".join(out)

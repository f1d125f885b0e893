"""Question ids built from a row's cells by ``dataset.id_template`` (``'{year}_{numero:03d}'``).

Cells are read as text, so Python's ``str.format`` alone refuses a numeric format on
them (``'{numero:02d}'`` on ``'7'``: "Unknown format code 'd' for object of type 'str'").
:func:`fill_id` formats a cell that holds a whole number (``7``, ``7.0``) as that number
when the template asks a numeric format of it, so ``Q{numero:02d}`` gives ``Q07``.  A
template that still cannot be filled is an ``error:`` naming the row and why.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from enade_bench.errors import UserError

__all__ = ["BUILT_IN", "fill_id", "template_fields"]

_WHOLE = re.compile(r"[+-]?\d+(?:\.0*)?")


#: What a template may name besides the row's cells: the file's name without its extension, and
#: the line where the row starts (the id of a row in a file without one: ``'{file_stem}:{line}'``).
BUILT_IN = ("file_stem", "line")


def template_fields(template: str) -> list[str]:
    """The cell names a template reads (:data:`BUILT_IN` included)."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


class _IdFormatter(string.Formatter):
    """``str.format``, except that a whole number read as text takes a numeric format."""

    def format_field(self, value: Any, format_spec: str) -> Any:
        try:
            return super().format_field(value, format_spec)
        except ValueError:
            if not isinstance(value, str) or not _WHOLE.fullmatch(value.strip()):
                raise
            return super().format_field(int(float(value.strip())), format_spec)


_FORMATTER = _IdFormatter()


def fill_id(template: str, values: Mapping[str, str], source: str, where: str, line: int = 0) -> str:
    """The id ``template`` gives a row of ``source`` starting at ``line`` (its cells ``values``); an
    error when it cannot.  A cell named ``line`` is read before the row's line."""
    try:
        built = {"line": line, **values, "file_stem": Path(source).stem}
        qid = _FORMATTER.vformat(template, (), built).strip()
    except KeyError as exc:
        raise UserError(
            f"{where}: dataset.id_template '{template}' cannot be filled (no column {exc})"
        ) from None
    except (ValueError, IndexError, AttributeError) as exc:
        raise UserError(f"{where}: dataset.id_template '{template}' cannot be filled ({exc})") from None
    if not qid:
        raise UserError(f"{where}: dataset.id_template '{template}' gives an empty id")
    return qid

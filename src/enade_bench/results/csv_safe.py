"""CSV files safe to open in a spreadsheet: every CSV the package writes goes through here.

A cell whose text begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is
read by Excel, LibreOffice and Google Sheets as a formula (``=HYPERLINK(…)``, ``@SUM(…)``),
so a model name, an item id or an option text taken from a data file could run in the
reader's spreadsheet. Following the OWASP rule ("CSV Injection",
https://owasp.org/www-community/attacks/CSV_Injection), such a cell is written with a
single quote in front, which spreadsheets show as text. Numbers stay numbers: a numeric
cell is never touched, and neither is a text cell that is a plain number (``-0.5``,
``+3``, ``-1e-05``) or only dashes (``-``, a placeholder). JSON files keep every value as it is; only the CSV text changes.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from enade_bench.results.safe_write import write_text

if TYPE_CHECKING:  # pandas loads with the first frame written, not with every command (SafeWriter needs none)
    import pandas as pd

#: First characters a spreadsheet reads as the start of a formula (OWASP).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def safe_cell(value: object) -> object:
    """``value`` with a ``'`` in front when it is text a spreadsheet would run as a formula.

    >>> safe_cell("=HYPERLINK(\\"http://x\\")")
    '\\'=HYPERLINK("http://x")'
    >>> safe_cell("-0.5"), safe_cell(-0.5), safe_cell("modelo")
    ('-0.5', -0.5, 'modelo')
    """
    if (
        isinstance(value, str)
        and value.startswith(FORMULA_STARTS)
        and not _PLAIN_NUMBER.fullmatch(value)
        and value.strip("-")  # "-", "--": a placeholder, never a formula
    ):
        return "'" + value
    return value


def _text(dtype: Any) -> bool:
    import pandas as pd  # noqa: PLC0415 (see TYPE_CHECKING above)

    if isinstance(dtype, pd.CategoricalDtype):
        return _text(dtype.categories.dtype)
    return pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)


def _safe_labels(index: pd.Index) -> pd.Index:
    import pandas as pd  # noqa: PLC0415 (see TYPE_CHECKING above)

    if isinstance(index, pd.MultiIndex):
        levels: list[Any] = [lvl.map(safe_cell) if _text(lvl.dtype) else lvl for lvl in index.levels]
        return index.set_levels(levels)
    return index.map(safe_cell) if _text(index.dtype) else index


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells, column names and index labels are :func:`safe_cell`."""
    out = frame.copy()
    for position in range(out.shape[1]):
        column = out.iloc[:, position]
        if _text(column.dtype):
            out.isetitem(position, column.map(safe_cell, na_action="ignore").to_numpy(dtype=object))
    out.columns = _safe_labels(out.columns)
    out.index = _safe_labels(out.index)
    return out


def to_csv_text(frame: pd.DataFrame, **kwargs: object) -> str:
    """``frame.to_csv(**kwargs)`` as text, with the formula cells neutralised (:func:`safe_frame`)."""
    text = safe_frame(frame).to_csv(None, **kwargs)  # type: ignore[call-overload]
    assert isinstance(text, str)
    return text


def write_csv(path: Path, frame: pd.DataFrame, **kwargs: object) -> Path:
    """Write ``frame`` as a safe CSV at ``path`` atomically (:func:`to_csv_text`); ``path``."""
    write_text(path, to_csv_text(frame, **kwargs))
    return path


class SafeWriter:
    """A :func:`csv.writer` (``\\n`` line ends) that writes every cell through :func:`safe_cell`."""

    def __init__(self, handle: TextIO) -> None:
        self._writer = csv.writer(handle, lineterminator="\n")

    def writerow(self, row: Iterable[object]) -> None:
        """Write one row."""
        self._writer.writerow([safe_cell(v) for v in row])

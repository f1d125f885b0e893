"""Cells the mapper reads in more than one shape: a list of options, an annulled marker.

* Options in one cell (``dataset.columns.options``): a JSON list read as A, B, C…, a
  JSON object keyed by letter (``{"A": "…", "B": "…"}``; keys such as ``a``, ``(A)``
  or ``A)`` too), or ARC's texts and labels (``{"text": […], "label": ["1", …]}``), in a
  JSON file or as JSON text in a CSV cell.
* A boolean (``has_image``: true/false, 1/0, sim/não) and a whole number (``year``).
* An annulled item's answer: the config's ``annulled_answers`` and the common forms
  (:data:`COMMON_ANNULLED`), compared without case, accents, surrounding space,
  brackets or a final full stop (``ANULADA``, ``Anulado``, ``(anulada)``, ``Annulled.``); a
  marker that is only symbols (``-``, ``*``, ``#``) is compared as written.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from typing import Any

from enade_bench.dataset.schema import LETTERS
from enade_bench.dataset.sources import cell_text, is_nonfinite
from enade_bench.errors import UserError

#: Annulled markers matched whatever ``dataset.annulled_answers`` holds (normalised by :func:`marker`).
COMMON_ANNULLED = frozenset(
    {
        "anulada",
        "anuladas",
        "anulado",
        "anulados",
        "annulled",
        "cancelada",
        "cancelado",
        "cancelled",
        "canceled",
        "nula",
        "nulo",
    }
)

_LETTER_KEY = re.compile(r"^[(\[]?\s*([A-Za-z])\s*[)\].:]?$")


def marker(text: str) -> str:
    """``text`` as annulled markers are compared: no case, accents, brackets or final full stop."""
    decomposed = unicodedata.normalize("NFKD", text.strip().casefold())
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return plain.strip("()[]{}*. \t") or plain.strip()  # a marker that is only a symbol: * or .


def annulled_markers(configured: list[str]) -> frozenset[str]:
    """The markers an answer is compared with: the config's and :data:`COMMON_ANNULLED`."""
    return COMMON_ANNULLED | {marker(a) for a in configured if marker(a)}


def _letter_of(key: str, where: str) -> int:
    found = _LETTER_KEY.match(key.strip())
    index = LETTERS.find(found.group(1).upper()) if found else -1
    if index < 0:
        raise UserError(
            f"{where}: option key '{key}' is not a letter {LETTERS[0]}–{LETTERS[-1]} "
            '(options as an object are keyed by letter: {"A": "…", "B": "…"})'
        )
    return index


def _labelled(cell: dict[str, Any], where: str) -> tuple[Any, dict[str, str]]:
    """ARC's ``{"text": […], "label": […]}``: an object keyed by letter when every label is one,
    else the texts in order and each label's letter by position (``1``–``4`` as A–D)."""
    texts, labels = cell["text"], cell["label"]
    if not isinstance(texts, list) or not isinstance(labels, list) or len(texts) != len(labels):
        raise UserError(f"{where}: expected 'text' and 'label' as two lists of the same length")
    names = [cell_text(label).strip() for label in labels]
    if len(set(names)) < len(names):
        raise UserError(f"{where}: a label is given twice ({', '.join(names)})")
    if all(_LETTER_KEY.match(name) for name in names):
        return dict(zip(names, texts, strict=True)), {}
    return texts, {name: LETTERS[i] for i, name in enumerate(names) if i < len(LETTERS)}


def options_from_cell(cell: Any, where: str) -> tuple[list[str], dict[str, str]]:
    """The option texts of one cell, and the letter each label stands for (empty: the letters).

    A JSON list (A, B, C… in order), an object keyed by letter, or parallel lists of texts
    and labels (:func:`_labelled`).  A missing letter in an object (``{"A": …, "C": …}``) is
    an empty option, which the mapper refuses as a gap before a non-empty option; a key that
    is no letter, a letter given twice (``A`` and ``a``), an option that is a list, object,
    boolean, ``NaN`` or ``Infinity`` is an error naming the option.
    """
    labels: dict[str, str] = {}
    if isinstance(cell, dict) and set(cell) == {"text", "label"}:
        cell, labels = _labelled(cell, where)
    if isinstance(cell, dict):
        by_letter: dict[int, Any] = {}
        for key, value in cell.items():
            index = _letter_of(str(key), where)
            if index in by_letter:
                raise UserError(f"{where}: option {LETTERS[index]} is given twice (key '{key}')")
            by_letter[index] = value
        cell = [by_letter.get(i) for i in range(max(by_letter, default=-1) + 1)]
    if not isinstance(cell, list):
        raise UserError(
            f'{where}: expected a JSON list of option texts (["…", "…"]) or an object keyed by letter '
            '({"A": "…", "B": "…"}) for options'
        )
    if len(cell) > len(LETTERS):
        raise UserError(f"{where}: {len(cell)} options, at most {len(LETTERS)} ({LETTERS[0]}–{LETTERS[-1]})")
    for i, option in enumerate(cell):
        if isinstance(option, list | dict | bool) or is_nonfinite(option):
            raise UserError(f"{where}: option {LETTERS[i]} is {json.dumps(option)[:30]}, expected a text")
    return ["" if o is None else cell_text(o).strip() for o in cell], labels


_TRUE = {"true", "1", "yes", "sim", "y", "t", "verdadeiro"}
_FALSE = {"false", "0", "no", "não", "nao", "n", "f", "falso", ""}


def as_bool(value: str, where: str) -> bool:
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise UserError(f"{where}: '{value}' is not a boolean (expected true/false, 1/0, sim/não)")


#: The years an exam may carry (a cell outside is a misread: ``2.019``, ``20190``).
YEARS = range(1900, 2101)


def whole_number(name: str, text: str, where: str) -> int | None:
    """A whole-number cell (``2019``, or ``2019.0`` as spreadsheets write it); empty: ``None``.

    A fraction (``2.019``), an infinity or NaN, and for ``year`` a value outside
    :data:`YEARS` is an error naming the cell, never silently rounded.
    """
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{where}: {name} '{text}' is not an integer") from None
    if not math.isfinite(value) or not value.is_integer():
        raise UserError(f"{where}: {name} '{text}' is not an integer")
    number = int(value)
    if name == "year" and number not in YEARS:
        raise UserError(f"{where}: year '{text}' is not a year between {YEARS[0]} and {YEARS[-1]}")
    return number

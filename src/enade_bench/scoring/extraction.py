"""Extract the chosen letter from a model's free-text answer.

A cascade of rules, tried in priority order; the first that yields a letter
valid for the item (A–D for a 4-option item) wins, and the result records which
rule matched:

1. ``resposta``      – ``Resposta: X`` / ``A resposta correta é X`` (the *last* such line wins)
2. ``alternativa``   – ``alternativa X``, ``letra X``, ``opção X``
3. ``parenthesized`` – ``(X)``
4. ``line_start``    – ``X)`` or ``X.`` / ``X -`` at the start of a line
5. ``lone_letter``   – the whole answer is one letter, possibly wrapped
   (``$B$``, ``**B**``, ``\\boxed{B}``, ``B.``)
6. ``option_text``   – the answer quotes exactly one option's text instead of a letter
7. ``fallback``      – the last upper-case valid letter standing alone
8. ``unanswered``    – nothing found (the prediction is ``None``)

Letters are read case-insensitively where the context makes them unambiguous
(rules 1–5); the fallback takes upper-case letters only, because ``a``/``e``
are Portuguese words, and skips ``A``/``E`` followed by a word (``A Lei…``,
``E então…``: article and conjunction, not answers).  The Portuguese article before a letter (``é a C``) is
skipped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

_OPEN = r"(?:\\boxed\{|\\text\{|\\mathrm\{|\*\*|\*|\$|\(|\[|\{|\"|'|“|‘|`)*"
_CLOSE = r"(?:\}|\*\*|\*|\$|\)|\]|\"|'|”|’|`)*"
_L = r"([A-Ea-e])(?![A-Za-zÀ-ÿ0-9])"
_ARTICLE = r"(?:(?:a|à)\s+)?(?:(?:alternativa|letra|op[cç][aã]o)\s+)?(?:(?:a)\s+)?"

_RESPOSTA = re.compile(
    r"resposta(?:\s+(?:correta|certa|final))?\s*(?:[eé]|:|-|=|seria|ser[aá])\s*(?:[eé]\s*)?(?::\s*)?"
    + _ARTICLE
    + _OPEN
    + r"\s*"
    + _L,
    re.IGNORECASE,
)
_ALTERNATIVA = re.compile(
    r"(?:alternativa|letra|op[cç][aã]o)(?:\s+(?:correta|certa))?\s*(?:[eé]\s+)?(?::\s*)?"
    r"(?:a\s+)?" + _OPEN + r"\s*" + _L,
    re.IGNORECASE,
)
_PAREN = re.compile(r"\(\s*([A-Ea-e])\s*\)")
_LINE_START = re.compile(r"^\s*" + _OPEN + r"([A-Ea-e])\s*(?:\)|\.(?!\w)|\s-\s|:)", re.MULTILINE)
_LONE = re.compile(r"^\W*" + _OPEN + r"\s*([A-Ea-e])\s*" + _CLOSE + r"\W*$")
# "A"/"E" followed by a word are the Portuguese article/conjunction ("A Lei…", "E então…").
_FALLBACK = re.compile(r"(?<![A-Za-zÀ-ÿ0-9])([A-E])(?![A-Za-zÀ-ÿ0-9])(?<![AE](?=\s+[A-Za-zÀ-ÿ]))")


@dataclass(frozen=True)
class Extraction:
    """The extracted letter (``None`` when unanswered) and the rule that found it."""

    letter: str | None
    rule: str


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


def _last_valid(pattern: re.Pattern[str], text: str, valid: str) -> str | None:
    hits = [m.group(1).upper() for m in pattern.finditer(text)]
    hits = [h for h in hits if h in valid]
    return hits[-1] if hits else None


def _first_valid(pattern: re.Pattern[str], text: str, valid: str) -> str | None:
    for match in pattern.finditer(text):
        letter = match.group(1).upper()
        if letter in valid:
            return letter
    return None


def _option_text(text: str, options: Sequence[str], valid: str) -> str | None:
    said = _normalise(text)
    if not said:
        return None
    found = [
        valid[i]
        for i, option in enumerate(options[: len(valid)])
        if (norm := _normalise(option)) and len(norm) >= 3 and norm in said
    ]
    return found[0] if len(found) == 1 else None


def extract_answer(text: str, valid_letters: str, options: Sequence[str] = ()) -> Extraction:
    """Extract the answer letter from ``text``.

    Parameters
    ----------
    text
        The model's output.
    valid_letters
        Letters valid for this item, e.g. ``"ABCD"``.
    options
        The option texts in display order (for the ``option_text`` rule).

    Examples
    --------
    >>> extract_answer("A alternativa correta é a C", "ABCDE")
    Extraction(letter='C', rule='alternativa')
    >>> extract_answer("**B**", "ABCDE")
    Extraction(letter='B', rule='lone_letter')
    """
    valid = valid_letters.upper()
    if (letter := _last_valid(_RESPOSTA, text, valid)) is not None:
        return Extraction(letter, "resposta")
    if (letter := _last_valid(_ALTERNATIVA, text, valid)) is not None:
        return Extraction(letter, "alternativa")
    if (letter := _first_valid(_PAREN, text, valid)) is not None:
        return Extraction(letter, "parenthesized")
    if (letter := _first_valid(_LINE_START, text, valid)) is not None:
        return Extraction(letter, "line_start")
    if (letter := _first_valid(_LONE, text.strip(), valid)) is not None:
        return Extraction(letter, "lone_letter")
    if options and (letter := _option_text(text, options, valid)) is not None:
        return Extraction(letter, "option_text")
    if (letter := _last_valid(_FALLBACK, text, valid)) is not None:
        return Extraction(letter, "fallback")
    return Extraction(None, "unanswered")

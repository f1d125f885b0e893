"""Split options printed inside the question text into stem and options.

Many published exam files keep the options in the question text::

    Paciente de 54 anos … Qual é a conduta? (A) Fazer … (B) Prescrever … (C) Iniciar …

:func:`split_options` finds the option markers, checks what it found and returns
the stem and the option texts, or raises :class:`OptionSplitError` with the
reason.  It is pure (no I/O); the loader (:mod:`enade_bench.dataset.loader`)
turns the reason into an ``error:`` naming the file and line.

How the markers are found
-------------------------
A marker is a match of the pattern (default :data:`DEFAULT_PATTERN`: ``(A)``,
``A)``, ``A.`` or ``a)``, ``(a)``, at the start of the text or after white space,
``A)``/``A.``/``a)`` followed by white space).  Markers are grouped by *style*
(the marker with its letter blanked, and the letter's case), because a stem can
contain a stray ``A.`` ("hepatite A. O paciente …") that is not an option.  For
each style the option block starts at its **last** ``A`` marker; the style with
the most markers from there on is taken.  The letters found must then be
``A, B, C, …`` exactly: consecutive from ``A``, in order, no repeats, at least
``min_options``.  Anything else is an error naming what was found, never a
guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from enade_bench.dataset.schema import LETTERS

#: ``(A)`` / ``(a)`` anywhere after white space; ``A)``, ``a)`` and ``A.`` after white space and
#: followed by white space.  Lower-case ``a.`` is not a marker (too common in running text).
DEFAULT_PATTERN = (
    r"(?:^|(?<=\s))"
    r"(?:\((?P<letter>[A-Ea-e])\)"
    r"|(?P<bare>[A-Ea-e])\)(?=\s|$)"
    r"|(?P<dot>[A-E])\.(?=\s|$))"
)
_DEFAULT = re.compile(DEFAULT_PATTERN)


class OptionSplitError(ValueError):
    """The text cannot be split into options; the message is the reason."""


@dataclass(frozen=True)
class SplitOptions:
    """A question text split at its option markers."""

    stem: str
    options: tuple[str, ...]

    @property
    def letters(self) -> str:
        return LETTERS[: len(self.options)]


@dataclass(frozen=True)
class _Marker:
    letter: str  # upper case
    start: int
    end: int
    style: tuple[str, bool]


def _letter_span(match: re.Match[str]) -> tuple[str, int, int]:
    for name in ("letter", "bare", "dot"):
        if name in match.re.groupindex and match.group(name) is not None:
            return match.group(name), match.start(name), match.end(name)
    raise OptionSplitError("the marker pattern matched without capturing a letter")


def _markers(text: str, pattern: re.Pattern[str]) -> list[_Marker]:
    found = []
    for match in pattern.finditer(text):
        letter, start, end = _letter_span(match)
        if len(letter) != 1:
            raise OptionSplitError(f"marker {match.group(0)!r} captured {letter!r}, not one letter")
        blanked = text[match.start() : start] + "_" + text[end : match.end()]
        found.append(_Marker(letter.upper(), match.start(), match.end(), (blanked, letter.isupper())))
    return found


def _option_block(markers: list[_Marker]) -> list[_Marker]:
    """The markers of the option block: per style from its last ``A``; the longest wins."""
    best: list[_Marker] = []
    for style in dict.fromkeys(m.style for m in markers):
        same = [m for m in markers if m.style == style]
        starts = [k for k, m in enumerate(same) if m.letter == "A"]
        if not starts:
            continue
        block = same[starts[-1] :]
        if len(block) > len(best) or (len(block) == len(best) and block[0].start > best[0].start):
            best = block
    return best


def _check_letters(letters: list[str], min_options: int) -> None:
    shown = ", ".join(letters)
    if len(letters) != len(set(letters)):
        repeated = next(x for x in letters if letters.count(x) > 1)
        raise OptionSplitError(f"option {repeated} appears twice (markers found: {shown})")
    unknown = [x for x in letters if x not in LETTERS]
    if unknown:
        raise OptionSplitError(f"option letter {unknown[0]} is not one of A–E (markers found: {shown})")
    expected = list(LETTERS[: len(letters)])
    if letters != expected:
        if sorted(letters) == expected:
            raise OptionSplitError(f"options out of order ({shown}); expected {', '.join(expected)}")
        raise OptionSplitError(f"option letters not consecutive from A ({shown})")
    if len(letters) < min_options:
        raise OptionSplitError(
            f"only {len(letters)} option(s) found ({shown}); expected at least {min_options}"
        )


def split_options(text: str, pattern: str | None = None, min_options: int = 2) -> SplitOptions:
    """Split ``text`` into the stem and the options that follow their markers.

    Parameters
    ----------
    text
        The question text with the options inside it.
    pattern
        Regular expression of one marker with a named group ``letter`` (``None``:
        :data:`DEFAULT_PATTERN`).  Letters are read case-insensitively.
    min_options
        Fewer options than this is an error (e.g. 5 for an exam whose questions
        all have five options, so that a truncated question is caught).

    Returns
    -------
    SplitOptions
        The stem (text before the first marker) and the option texts, white
        space trimmed.

    Raises
    ------
    OptionSplitError
        No marker; no ``A`` marker; letters out of order, repeated or not
        consecutive from ``A``; fewer than ``min_options`` options; an empty
        option or an empty stem.
    """
    compiled = _DEFAULT if pattern is None else re.compile(pattern)
    markers = _markers(text, compiled)
    if not markers:
        hint = "(A), A), A. or a)" if pattern is None else f"the pattern {pattern!r}"
        raise OptionSplitError(f"no option markers found (expected {hint} before each option)")
    block = _option_block(markers)
    if not block:
        shown = ", ".join(m.letter for m in markers)
        raise OptionSplitError(f"no marker for option A (markers found: {shown})")
    _check_letters([m.letter for m in block], min_options)
    ends = [m.start for m in block[1:]] + [len(text)]
    options = tuple(text[m.end : end].strip() for m, end in zip(block, ends, strict=True))
    empty = [LETTERS[k] for k, option in enumerate(options) if not option]
    if empty:
        raise OptionSplitError(f"option {empty[0]} is empty")
    stem = text[: block[0].start].strip()
    if not stem:
        raise OptionSplitError("no question text before option A")
    return SplitOptions(stem=stem, options=options)

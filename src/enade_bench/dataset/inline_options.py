"""Split options printed inside the question text into stem and options.

Many published exam files keep the options in the question text::

    Paciente de 54 anos … Qual é a conduta? (A) Fazer … (B) Prescrever … (C) Iniciar …

:func:`split_options` finds the option markers, checks what it found and returns
the stem and the option texts, or raises :class:`OptionSplitError` with the
reason.  It is pure (no I/O); the loader (:mod:`enade_bench.dataset.loader`)
turns the reason into an ``error:`` naming the file and line, and compares each
row's number of options with the file's usual number (:func:`usual_count`).

The rule
--------
1. **Candidates.**  Every match of the marker pattern is a candidate, with its
   letter (read case-insensitively), position and *shape*.  The default
   pattern (:data:`DEFAULT_PATTERN`) has three shapes:

   * ``(A)`` / ``(a)``, not right after a letter or digit: ``é:(A)`` and
     ``?(A)`` are candidates, ``etambutol(E)`` and ``o(a)`` are not;
   * ``A)`` / ``a)``, not right after a letter, digit or ``(``, followed by
     white space or the end;
   * ``A.``, after white space (or at the start) and followed by white space or
     the end (lower-case ``a.`` and ``S.A.`` are too common in running text).

   A custom pattern's shape is its match with the letter blanked; a match
   right after a letter or digit is *inside a word*.
2. **Readings.**  A reading is a sequence of candidates of one shape whose
   letters are ``A, B, C, …`` in text order (a subsequence: candidates left
   out stay text).  Upper and lower case mix (``(A) (B) (C) (d)``); shapes
   do not, so ``Droga A.`` cannot become a marker of a ``(A)`` question.
3. **Preferences**, the first that differs decides:

   a. the most options (the longest run ``A, B, C, …``);
   b. the stronger shape: ``(A)``, then ``A)``, then ``A.`` (a sentence can end
      in ``Droga A.``; hardly anything but a marker looks like ``(A)``);
   c. the fewest markers inside a word (custom patterns only);
   d. the latest ``A``, i.e. the fewest candidates left over inside the option
      block: a stray ``hepatite A.`` before the options stays in the stem.

   Two readings still tied (same ``A``, a different choice of later markers
   inside words) are an error: the row is ambiguous.
4. **Checks.**  Every candidate of the reading's shape inside the option block
   (from its ``A`` on) must belong to the reading, unless it is inside a word:
   one that does not (``(A) (B) (E) (C) (D)``, a repeated ``(B)``, ``(A) (B)
   (D)``) looks like a marker, so the row is an error naming the letters
   found, never a split that glues it onto an option.  Candidates of another
   shape, or inside a word, are text (``Droga A.``, ``etambutol(E)`` under a
   custom pattern).  Then: at least ``min_options`` options, none empty, and a
   stem before ``A``.

Then the file: a row whose number of options differs from the number that at
least :data:`USUAL_SHARE` of its file's rows have (:func:`usual_count`) is
flagged by the loader, unless ``options_in_text.allow_other_counts`` is set: a
misread or truncated question is never loaded silently.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from enade_bench.dataset.schema import LETTERS

#: ``(A)``/``(a)`` not right after a letter or digit; ``A)``/``a)`` not right after a letter, digit
#: or ``(``, then white space; ``A.`` after white space, then white space.
DEFAULT_PATTERN = (
    r"(?<![^\W_])\((?P<letter>[A-Ea-e])\)"
    r"|(?<![^\W_])(?<!\()(?P<bare>[A-Ea-e])\)(?=\s|$)"
    r"|(?:^|(?<=\s))(?P<dot>[A-E])\.(?=\s|$)"
)
_DEFAULT = re.compile(DEFAULT_PATTERN)
#: The default shapes, strongest first (preference b).
_SHAPES = {"letter": "(A)", "bare": "A)", "dot": "A."}
_RANK = {shape: rank for rank, shape in enumerate(_SHAPES.values())}

#: A file's usual number of options is the number that at least this share of its rows have.
USUAL_SHARE = 0.75


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
class _Candidate:
    letter: str  # upper case
    start: int
    end: int
    shape: str
    in_word: bool


@dataclass(frozen=True)
class _Reading:
    markers: tuple[_Candidate, ...]
    in_word: int  # markers inside a word
    ways: int  # readings from the same A that tie with this one

    def key(self) -> tuple[int, int, int, int]:
        """Preferences a–d, larger is better."""
        return (len(self.markers), -_RANK.get(self.markers[0].shape, 0), -self.in_word, self.markers[0].start)


def _candidates(text: str, pattern: re.Pattern[str]) -> list[_Candidate]:
    found = []
    for match in pattern.finditer(text):
        group = next((g for g in _SHAPES if g in match.re.groupindex and match.group(g) is not None), None)
        if group is None:
            raise OptionSplitError("the marker pattern matched without capturing a letter")
        letter, start, end = match.group(group), match.start(group), match.end(group)
        if len(letter) != 1:
            raise OptionSplitError(f"marker {match.group(0)!r} captured {letter!r}, not one letter")
        if pattern is _DEFAULT:
            shape = _SHAPES[group]
        else:
            shape = re.sub(
                r"\s+", " ", text[match.start() : start] + "_" + text[end : match.end()]
            ).casefold()
        in_word = match.start() > 0 and text[match.start() - 1].isalnum()
        found.append(_Candidate(letter.upper(), match.start(), match.end(), shape, in_word))
    return found


def _readings(same_shape: list[_Candidate]) -> list[_Reading]:
    """The best reading from each ``A`` of one shape (preferences a and c; ties counted)."""
    best: dict[int, _Reading] = {}
    for i in reversed(range(len(same_shape))):
        here = same_shape[i]
        if here.letter not in LETTERS:
            continue
        following = LETTERS[LETTERS.index(here.letter) + 1 : LETTERS.index(here.letter) + 2]
        nexts = [
            best[j] for j in range(i + 1, len(same_shape)) if j in best and same_shape[j].letter == following
        ]
        if not nexts:
            best[i] = _Reading((here,), int(here.in_word), 1)
            continue
        top = max((len(r.markers), -r.in_word) for r in nexts)
        tied = [r for r in nexts if (len(r.markers), -r.in_word) == top]
        best[i] = _Reading(
            (here, *tied[0].markers), tied[0].in_word + here.in_word, sum(r.ways for r in tied)
        )
    return [r for i, r in best.items() if same_shape[i].letter == "A"]


def _check_letters(letters: list[str]) -> None:
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


def split_options(text: str, pattern: str | None = None, min_options: int = 2) -> SplitOptions:
    """Split ``text`` into the stem and the options that follow their markers.

    The rule (candidates, readings, the order of preferences, the checks) is in
    the module docstring and in docs/bring_your_own_exam.md.

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
        No marker; no ``A`` marker; a marker of the reading's shape that is not
        part of it (letters out of order, repeated, not consecutive from ``A``,
        outside A–E); two readings that tie; fewer than ``min_options``
        options; an empty option or an empty stem.

    Examples
    --------
    >>> split_options("Qual é a droga?(A) Droga A. (B) Droga B. (c) Nenhuma.").options
    ('Droga A.', 'Droga B.', 'Nenhuma.')
    """
    compiled = _DEFAULT if pattern is None else re.compile(pattern)
    candidates = _candidates(text, compiled)
    if not candidates:
        hint = "(A), A), A. or a)" if pattern is None else f"the pattern {pattern!r}"
        raise OptionSplitError(f"no option markers found (expected {hint} before each option)")
    shapes = dict.fromkeys(c.shape for c in candidates)
    readings = [r for shape in shapes for r in _readings([c for c in candidates if c.shape == shape])]
    if not readings:
        shown = ", ".join(c.letter for c in candidates)
        raise OptionSplitError(f"no marker for option A (markers found: {shown})")
    chosen = max(readings, key=_Reading.key)
    first = chosen.markers[0]
    block = [c for c in candidates if c.shape == first.shape and c.start >= first.start]
    _check_letters([c.letter for c in block if c in chosen.markers or not c.in_word])
    if chosen.ways > 1:
        shown = ", ".join(c.letter for c in block)
        raise OptionSplitError(f"the markers can be read in {chosen.ways} equally good ways ({shown})")
    letters = ", ".join(c.letter for c in chosen.markers)
    if len(chosen.markers) < min_options:
        raise OptionSplitError(
            f"only {len(chosen.markers)} option(s) found ({letters}); expected at least {min_options}"
        )
    ends = [m.start for m in chosen.markers[1:]] + [len(text)]
    options = tuple(text[m.end : end].strip() for m, end in zip(chosen.markers, ends, strict=True))
    empty = [LETTERS[k] for k, option in enumerate(options) if not option]
    if empty:
        raise OptionSplitError(f"option {empty[0]} is empty")
    stem = text[: first.start].strip()
    if not stem:
        raise OptionSplitError("no question text before option A")
    return SplitOptions(stem=stem, options=options)


@dataclass(frozen=True)
class UsualCount:
    """The number of options most rows of a file have, and how many of its rows have it."""

    options: int
    rows: int
    total: int


def usual_count(counts: Sequence[int]) -> UsualCount | None:
    """The file's usual number of options: the one at least :data:`USUAL_SHARE` of its rows have.

    A file whose rows mix counts more than that (an exam that deliberately has
    3-, 4- and 5-option questions) has no usual count, and ``None`` is returned:
    no row is flagged for its count.

    Parameters
    ----------
    counts
        The number of options of each row of one file that loaded.

    Examples
    --------
    >>> usual_count([4] * 717 + [3, 3, 5])
    UsualCount(options=4, rows=717, total=720)
    >>> usual_count([5, 4, 4]) is None  # 2 of 3 rows: no usual count
    True
    """
    if not counts:
        return None
    options, rows = Counter(counts).most_common(1)[0]
    if rows < USUAL_SHARE * len(counts):
        return None
    return UsualCount(options=options, rows=rows, total=len(counts))

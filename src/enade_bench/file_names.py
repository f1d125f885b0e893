"""The one rule for names that become file names: checked in configs, mapped when read.

A field name becomes ``accuracy_by_{field}.csv``, an experiment name and a strategy id
become ``{name}_{strategy}_results.json``, a study's name and model labels become folders.
Such a name must stay one file name inside its folder, so it may not hold ``/``, ``\\``,
``..``, NUL or another control character, and is at most :data:`NAME_MAX_BYTES` bytes in
UTF-8 (a file system allows 255 per name; the rest is left for the prefixes, suffixes and
the temporary name of an atomic write).

* In a config the name is **refused** before anything runs (:func:`check_name`, a
  pydantic validator: one ``error:`` line naming the key).
* In a results file made elsewhere (``report``, ``compare``) it is **mapped** to a safe
  file name (:func:`safe_stem`) and the caller says so in one ``warning:`` line; nothing is
  written outside the folder.

This module is pure (no I/O; pydantic for :data:`SafeName`) so that the config layer can use it; the writer that applies it
to paths is :mod:`enade_bench.results.safe_write`.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable
from typing import Annotated

from pydantic import AfterValidator

__all__ = [
    "NAME_MAX_BYTES",
    "NAME_RULE",
    "STEM_MAX_BYTES",
    "SafeName",
    "check_name",
    "check_names",
    "name_problem",
    "safe_stem",
]

#: The longest name (bytes of UTF-8) a config may give.
NAME_MAX_BYTES = 120
#: The longest file stem the report writes (a name with its prefix, e.g. ``accuracy_by_``).
STEM_MAX_BYTES = 200
#: The rule, in the words of the error messages.
NAME_RULE = (
    f"a name of at most {NAME_MAX_BYTES} bytes (UTF-8), not '.', without '/', '\\', '..', NUL or "
    "control characters"
)

_SEPARATORS = frozenset("/\\")


def _is_control(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp") and ch != "\u200d"


def shown(text: str) -> str:
    r"""``text`` with every control character (NUL, ESC, a line break…) written as an escape,
    so that a name from a file made elsewhere prints on one line and draws in a figure.

    >>> print(shown("m1\x1b[31m\n"))
    m1\x1b[31m\n
    """
    if not any(_is_control(ch) for ch in text):
        return text
    return "".join(ch.encode("unicode_escape").decode("ascii") if _is_control(ch) else ch for ch in text)


def name_problem(name: str, limit: int = NAME_MAX_BYTES) -> str | None:
    """What makes ``name`` unusable as a file name (``None`` when it is fine).

    >>> name_problem("area/subarea")
    "holds '/'"
    >>> name_problem("S1") is None
    True
    """
    if not name:
        return "is empty"
    for ch in name:
        if ch in _SEPARATORS:
            return f"holds {ch!r}"
        if ch == "\0":
            return "holds a NUL character"
        if _is_control(ch):
            kind = "lone surrogate" if unicodedata.category(ch) == "Cs" else "control character"
            return f"holds the {kind} U+{ord(ch):04X}"
    if name == ".":
        return "is '.' (the folder itself)"
    if ".." in name:
        return "holds '..'"
    size = len(name.encode("utf-8"))
    if size > limit:
        return f"is {size} bytes long (at most {limit})"
    return None


def check_name(name: str) -> str:
    """``name`` when it follows :data:`NAME_RULE`; ``ValueError`` saying why not (for validators)."""
    problem = name_problem(name)
    if problem is not None:
        raise ValueError(f"{problem}; expected {NAME_RULE}")
    return name


def safe_stem(stem: str, limit: int = STEM_MAX_BYTES) -> str:
    """``stem`` itself when it is a safe file name, else a safe name derived from it.

    Separators, NUL and control characters become ``_``, every ``..`` becomes ``_``, and
    the result is cut to fit ``limit`` bytes; a mapped name ends in ``-`` and 8 hex digits
    of the SHA-256 of the original, so that two different names never share a file
    (``a/b`` and ``a_b`` stay apart).

    >>> safe_stem("accuracy_by_area")
    'accuracy_by_area'
    >>> safe_stem("accuracy_by_../../x")
    'accuracy_by_____x-08c31b66'
    """
    if name_problem(stem, limit) is None:
        return stem
    text = "".join("_" if ch in _SEPARATORS or ch == "\0" or _is_control(ch) else ch for ch in stem)
    while ".." in text:
        text = text.replace("..", "_")
    tag = "-" + hashlib.sha256(stem.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    room = limit - len(tag)
    body = text.encode("utf-8")[:room].decode("utf-8", "ignore")
    return (body or "_") + tag


#: A config key whose value names files: refused (one ``error:`` line naming the key) unless
#: it follows :data:`NAME_RULE`.
SafeName = Annotated[str, AfterValidator(check_name)]


def check_names(names: Iterable[str], what: str) -> None:
    """``ValueError`` naming the first of ``names`` that breaks :data:`NAME_RULE` (``what``: e.g. ``field name``)."""
    for name in names:
        problem = name_problem(name)
        if problem is not None:
            raise ValueError(f"{what} {name!r} {problem}; expected {NAME_RULE}")

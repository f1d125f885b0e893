"""The secrets a run knows, and the words no secret can be told from (issue 51).

A *strong* secret (:data:`STRONG_SECRET` characters or more, not a piece of the
vocabulary) is withheld from every output in every form.  A *weak* one (``resposta``,
``lm-studio``, a course name) is still sent, but masking its value would damage data (an
answer ``Resposta: A``, a field ``accuracy``, a provider ``openai``): it is masked only
where it is known to be (the config's ``api_key``, a URL, ``Bearer …``).  The
*vocabulary* is the project's own words and the run's data (:func:`add_vocabulary`); a
secret inside it is weak, and a fragment of a secret found in it is no evidence.
Identifiers sent back to a provider (batch ids) are never withheld (:func:`keep_identifiers`).

Imports nothing from the package but :mod:`.decoded` (layer 0).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from enade_bench.masking.decoded import set_common

#: A secret shorter than this (``resposta``, ``lm-studio``) is *weak*: masking its value would
#: hit ordinary text (an answer, a field name, a course), so it is sent but masked only where it
#: is known to be (the config's ``api_key``, a URL's user-info and query values, ``Bearer …``).
STRONG_SECRET = 16

_lock = threading.Lock()
_known: set[str] = set()  # strong secrets: every form of them withheld from every output
_weak: set[str] = set()  # too short or too common: masked only where they are known to be
_vocabulary: list[str] = []  # casefolded texts of the project's own words and the run's data
_kept: set[str] = set()  # identifiers sent back to a provider (batch ids): never withheld


def _common(secret: str) -> bool:
    """Too short, or inside the vocabulary (call under the lock)."""
    folded = secret.casefold()
    return len(secret) < STRONG_SECRET or any(folded in text for text in _vocabulary)


def is_common(secret: str) -> bool:
    """Whether ``secret`` is *weak*: under :data:`STRONG_SECRET` characters, or a piece of the
    project's vocabulary (:func:`add_vocabulary`: field and provider names, prompt templates,
    the data).  A weak secret is sent, but its echoes cannot be told from data: it is masked
    only where it is known to be (config, URL, ``Bearer``), never by its value in free text."""
    with _lock:
        return _common(secret)


def remember(secrets: Iterable[str | None]) -> None:
    """Register secrets for the rest of the process: :func:`mask` hides them from then on
    (weak ones, :func:`is_common`, only where they are known to be)."""
    with _lock:
        for secret in secrets:
            if secret:
                (_weak if _common(secret) else _known).add(secret)


def add_vocabulary(texts: Iterable[str]) -> list[str]:
    """Add the project's own words (field names, provider names, templates, the data) that
    no secret may be recognised in; the remembered secrets that became weak by it."""
    with _lock:
        _vocabulary.append("\0".join(t.casefold() for t in texts if t))
        moved = sorted(s for s in _known if _common(s))
        _known.difference_update(moved)
        _weak.update(moved)
        set_common("\0".join(_vocabulary))
    return moved


def known_secrets() -> list[str]:
    """The strong secrets remembered so far (:func:`remember`): withheld in every form."""
    with _lock:
        return sorted(_known)


def weak_secrets() -> list[str]:
    """The weak secrets remembered so far (:func:`is_common`)."""
    with _lock:
        return sorted(_weak)


def keep_identifiers(identifiers: Iterable[str]) -> None:
    """Identifiers the project sends back (batch and file ids): written as they are, never
    withheld, even when a fragment of a secret happens to be in one."""
    with _lock:
        _kept.update(i for i in identifiers if i)


def kept_identifiers() -> frozenset[str]:
    """The identifiers registered by :func:`keep_identifiers`."""
    with _lock:
        return frozenset(_kept)


def forget_all() -> None:
    """Drop every remembered secret, word and identifier (tests; a long-lived process)."""
    with _lock:
        for registry in (_known, _weak, _vocabulary, _kept):
            registry.clear()
        set_common("")


def in_vocabulary(piece: str) -> bool:
    folded = piece.casefold()
    with _lock:
        return any(folded in text for text in _vocabulary)


def split_known(secrets: Iterable[str | None]) -> tuple[list[str], list[str]]:
    """The strong secrets (remembered and given), and the weak ones (:func:`is_common`)."""
    with _lock:
        given = [s for s in secrets if s]
        strong = [*_known, *(s for s in given if not _common(s))]
        weak = [*_weak, *(s for s in given if _common(s))]
    return strong, [w for w in weak if len(w) >= 2]

"""Whether a text holds a secret in any decoded form: the check behind every output.

A server can echo a key in any encoding: JSON with ``/`` escaped as ``\\/`` (PHP's
default), split over lines, every byte ``%XX``-encoded, as hex, as HTML entities, in
upper or lower case, as base64 (also of ``Basic user:key``, wrapped every N
characters).  :func:`holds_secret` decodes a text into each of these *views* and looks
for the secret, or any :data:`FRAGMENT` consecutive characters of it, in each; a text
that holds one is replaced whole by :data:`MARK` (:func:`withhold`), never partly
masked, so no undecoded remainder can leak.

:func:`scrub_document` applies this to a whole file before it is written: a JSON or
JSON-lines file string by string, a CSV file cell by cell, any other text line by line
(with its neighbours, for a secret split over lines).

Pure: no I/O, no import from the package.
"""

from __future__ import annotations

import base64
import binascii
import csv
import html
import io
import json
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from urllib.parse import unquote, unquote_plus

#: What a text that held a secret is replaced by (the whole text, not the secret alone).
MARK = "[withheld: it held a form of a secret]"
#: A secret is recognised by any run of this many consecutive characters of it.
FRAGMENT = 8
#: Shortest secret checked (shorter ones would match ordinary text); must equal the masker's.
MIN_SECRET = 6

#: The project's own words and the run's data, casefolded: a fragment found in them is no evidence.
_common = ""

_SPACE = re.compile(r"\s+")
_JSON_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)", re.DOTALL)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}
#: Hex digits, optionally separated (``de:ad``, ``de ad``, ``\\xde\\xad``, ``0xde``).
_HEX_RUN = re.compile(r"(?:(?:\\x|0x)?[0-9a-fA-F]{2}[:\-]?){6,}")
#: A base64 run (standard or URL-safe alphabet), whitespace already removed.
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_\-]{8,}")


def _json_unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if len(code) == 5 and code[0] == "u":
            return chr(int(code[1:], 16))
        if len(code) == 3 and code[0] == "x":
            return chr(int(code[1:], 16))
        return _SIMPLE_ESCAPES.get(code, code)

    return _JSON_ESCAPE.sub(one, text) if "\\" in text else text


def _text_views(text: str) -> list[str]:
    """``text`` decoded each way (and two ways in a row), whitespace removed; case kept."""
    views, fresh = {text}, [text]
    for _ in range(2):  # each decoding, then each again on what changed (``%26%2335;``, ``\\u0026#35;``)
        made = []
        for view in fresh:
            if "\\" in view:
                made.append(_json_unescape(view))
            if "&" in view:
                made.append(html.unescape(view))
            if "%" in view:
                made += [unquote(view), unquote_plus(view)]
        fresh = [v for v in dict.fromkeys(made) if v not in views]
        views.update(fresh)
    return [_SPACE.sub("", v) for v in views]


def _hex_bytes(view: str) -> list[bytes]:
    found = []
    for match in _HEX_RUN.finditer(view):
        digits = re.sub(r"\\x|0x|[:\-]", "", match.group(0))
        for start in (0, 1):
            chunk = digits[start:]
            try:
                found.append(bytes.fromhex(chunk[: len(chunk) // 2 * 2]))
            except ValueError:
                continue
    return found


def _base64_bytes(view: str) -> list[bytes]:
    """Every base64 run of ``view`` decoded at each of the four alignments (a run may start
    with a word glued on once whitespace is gone: ``Basic`` + the encoding)."""
    found = []
    for match in _BASE64_RUN.finditer(view):
        run = match.group(0).replace("-", "+").replace("_", "/")
        for start in range(4):
            chunk = run[start:]
            chunk = chunk[: len(chunk) // 4 * 4]
            if len(chunk) < 8:
                continue
            try:
                found.append(base64.b64decode(chunk, validate=True))
            except (binascii.Error, ValueError):
                continue
    return found


def set_common(text: str) -> None:
    """The vocabulary (casefolded) whose pieces never count as a fragment of a secret."""
    global _common  # noqa: PLW0603 (one process-wide vocabulary, set by enade_bench.masking)
    _common = text
    _needles.cache_clear()


@lru_cache(maxsize=256)
def _needles(secret: str) -> tuple[str, ...]:
    """The casefolded secret (whitespace removed), and every :data:`FRAGMENT`-character run of
    it that is not a piece of the vocabulary (:func:`set_common`: ``accuracy`` in a key is no
    evidence that a text holding ``accuracy`` holds the key)."""
    flat = _SPACE.sub("", secret).casefold()
    if len(flat) < MIN_SECRET:
        return ()
    if len(flat) <= FRAGMENT:
        return (flat,)
    pieces = dict.fromkeys(flat[i : i + FRAGMENT] for i in range(len(flat) - FRAGMENT + 1))
    return tuple(p for p in pieces if p not in _common)


def _views(text: str) -> list[str]:
    """Every view of ``text`` to search, casefolded: the text views, and the bytes that
    hex or base64 runs in them decode to."""
    texts = _text_views(text)
    decoded: list[bytes] = []
    for view in texts:
        decoded += _hex_bytes(view)
        decoded += _base64_bytes(view)
    views = [v.casefold() for v in texts]
    if decoded:
        joined = b"\0".join(decoded)
        views.append(joined.decode("utf-8", "replace").casefold())
        views.append(joined.decode("latin-1").casefold())
    return views


def holds_secret(text: str, secrets: Iterable[str]) -> bool:
    """Whether ``text`` holds any of ``secrets``, or :data:`FRAGMENT` characters of one, in any
    form: literal, any case, split by whitespace or line breaks, JSON-escaped (``\\/``,
    ``\\u00XX``), percent-encoded, HTML entities, hex, base64 (standard or URL-safe, inside a
    longer encoded text such as ``Basic user:key``, wrapped).

    Examples
    --------
    >>> holds_secret("key: c2stU0VDUkVU\\nS0VZLTEy", ["sk-SECRETKEY-12"])
    True
    >>> holds_secret("HTTP 400: bad request", ["sk-SECRETKEY-12"])
    False
    """
    needles = {n for s in secrets if s for n in _needles(s)}
    if not needles or not text:
        return False
    views = _views(text)
    return any(needle in view for view in views for needle in needles)


def echoes_word(text: str, words: Iterable[str]) -> bool:
    """Whether ``text`` holds one of ``words`` (weak secrets: too short or too common to be looked for
    in every form) whole, in any case, between characters that are neither letters nor digits.

    >>> echoes_word("401: Incorrect API key provided: sk-local-7f3a.", ["sk-local-7f3a"])
    True
    >>> echoes_word("sk-local-7f3ab", ["sk-local-7f3a"])
    False
    """
    folded = text.casefold()
    return any(_word(w.casefold()).search(folded) for w in words if w and w.casefold() in folded)


def _word(word: str, flags: int = 0) -> re.Pattern[str]:
    """``word`` whole: between characters that are neither letters nor digits."""
    return re.compile(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", flags)


def mask_words(text: str, words: Iterable[str], mask: str = "***") -> str:
    """``text`` with each of ``words`` that it holds whole (:func:`echoes_word`; keys are ASCII, so
    any case is ``re.IGNORECASE``) replaced by ``mask``: a weak secret echoed in an answer that is
    kept to be scored (a batch's manifest).

    >>> mask_words("401: Incorrect API key provided: SK-local-7f3a.", ["sk-local-7f3a"])
    '401: Incorrect API key provided: ***.'
    """
    for word in sorted({w for w in words if w}, key=len, reverse=True):
        text = _word(word, re.IGNORECASE).sub(mask, text)
    return text


def holds_secret_bytes(data: bytes, secrets: Iterable[str]) -> bool:
    """Whether binary ``data`` (a figure) holds a secret's bytes literally, in any case."""
    needles = {n.encode("utf-8") for s in secrets if s for n in _needles(s)}
    lowered = data.lower()
    return any(n in lowered for n in needles)


def withhold(text: str, secrets: Iterable[str]) -> str:
    """``text``, or :data:`MARK` when it holds a secret in any form (:func:`holds_secret`)."""
    return MARK if holds_secret(text, secrets) else text


def _scrub_json(value: object, secrets: Sequence[str], keep: frozenset[str]) -> object:
    if isinstance(value, str):
        return value if value in keep else withhold(value, secrets)
    if isinstance(value, list):
        return [_scrub_json(v, secrets, keep) for v in value]
    if isinstance(value, dict):
        return {_scrub_json(str(k), secrets, keep): _scrub_json(v, secrets, keep) for k, v in value.items()}
    return value


def _scrub_lines(text: str, secrets: Sequence[str]) -> str:
    """Each line holding a secret -> :data:`MARK`; a secret split over 2-3 lines marks them all."""
    lines = text.split("\n")
    marked = [holds_secret(line, secrets) for line in lines]
    for width in (2, 3):
        for i in range(len(lines) - width + 1):
            if not any(marked[i : i + width]) and holds_secret("\n".join(lines[i : i + width]), secrets):
                marked[i : i + width] = [True] * width
    return "\n".join(MARK if m else line for line, m in zip(lines, marked, strict=True))


def _dump_like(original: str, value: object) -> str:
    indent = 2 if "\n " in original else None
    end = "\n" if original.endswith("\n") else ""
    return json.dumps(value, ensure_ascii=False, indent=indent) + end


def scrub_document(text: str, suffix: str, secrets: Sequence[str], keep: frozenset[str] = frozenset()) -> str:
    """``text`` (a file's whole content) with every part that holds a secret withheld.

    A JSON file: every string (key or value) that holds one becomes :data:`MARK`; JSON lines:
    each line so; CSV: each cell; any other text: each line (:func:`_scrub_lines`).  The file
    keeps its shape (still valid JSON or CSV).  Text that holds no secret is returned as it is.
    """
    if not holds_secret(text, secrets):
        return text
    suffix = suffix.lower()
    if suffix == ".json":
        try:
            return _dump_like(text, _scrub_json(json.loads(text), secrets, keep))
        except (ValueError, RecursionError):
            pass
    if suffix == ".jsonl":
        out = []
        for line in text.split("\n"):
            try:
                out.append(json.dumps(_scrub_json(json.loads(line), secrets, keep), ensure_ascii=False))
            except (ValueError, RecursionError):
                out.append(withhold(line, secrets) if line else line)
        return "\n".join(out)
    if suffix == ".csv":
        try:
            rows = list(csv.reader(io.StringIO(text, newline="")))
        except csv.Error:
            rows = None
        if rows is not None:
            buffer = io.StringIO(newline="")
            csv.writer(buffer, lineterminator="\n").writerows(
                [[withhold(cell, secrets) for cell in row] for row in rows]
            )
            return buffer.getvalue()
    return _scrub_lines(text, secrets)

"""Secrets kept out of everything the program prints or writes: one place for every mask.

A run knows its secrets (:mod:`.known`: strong ones are withheld in every form; weak ones,
too short or too common to be told from data, only where they are known to be) (the API key, the user-info and token parameters of a URL); a
server can echo them back in any encoding (the ``Authorization`` header as
``Basic base64(user:password)``, the key as base64, the URL percent-encoded).
:func:`secret_forms` lists the forms of one secret, :func:`remember` registers the
run's secrets for the whole process, and :func:`mask` replaces every known form, every
12-character fragment of a key, and the credentials any text shows by its shape (URL
user-info, token query parameters, ``Bearer``/``Basic`` values, provider key prefixes)
by ``***``.  :func:`mask_config` also masks the values of secret-looking config keys
(``api_key``, ``token``, ``password``, ``secret``…), for results files written elsewhere
or by an older version.

:func:`scrub` is what every output goes through (the safe writer, stderr, recorded
errors): a text that holds a remembered secret in any decoded form (:mod:`.decoded`:
``\\/`` escapes, split lines, ``%XX``, hex, HTML entities, any case, wrapped base64)
is replaced whole by :data:`MARK`; any other text is :func:`mask`-ed.  :func:`public_url`
is the form of a URL that results and logs keep: scheme, host, port and path, every
query value and the user-info ``***`` whatever their names.

This module imports nothing from the package (layer 0): the config, the results, the
backends, the report and the command line all mask through it.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TypeVar
from urllib.parse import quote, quote_plus, unquote, urlsplit, urlunsplit

from enade_bench.masking.decoded import MARK, echoes_word, holds_secret, scrub_document, withhold
from enade_bench.masking.known import (
    STRONG_SECRET,
    add_vocabulary,
    forget_all,
    in_vocabulary,
    is_common,
    keep_identifiers,
    kept_identifiers,
    known_secrets,
    remember,
    split_known,
    weak_secrets,
)

__all__ = [
    "MARK",
    "MASK",
    "STRONG_SECRET",
    "add_vocabulary",
    "echoes_word",
    "forget_all",
    "holds_secret",
    "is_common",
    "keep_identifiers",
    "kept_identifiers",
    "known_secrets",
    "mask",
    "mask_config",
    "mask_json",
    "mask_url",
    "mask_urls_in",
    "public_url",
    "remember",
    "scrub",
    "scrub_document",
    "secret_forms",
    "url_secrets",
    "weak_secrets",
    "withhold",
]

#: What a secret is replaced by.
MASK = "***"
#: Shortest secret (or encoded piece of one) that is masked: shorter ones would hit ordinary text.
MIN_SECRET = 6
#: Shortest base64 piece of a secret embedded in a longer base64 text that is masked.
MIN_BASE64_PIECE = 6
#: Runs of this many characters of a long secret are masked too (servers echo part of a key).
FRAGMENT = 12
#: A query parameter that carries a key or token (``?key=…``, ``&api_key=…``, ``access_token=…``).
_URL_TOKEN = re.compile(
    r"(?P<name>[?&](?:key|api[_-]?key|apikey|token|access[_-]?token|auth|password|secret|sig|signature)=)"
    r"[^&#\s\"'<>]+",
    re.IGNORECASE,
)
#: ``Bearer <token>`` / ``Basic <base64>`` (an ``Authorization`` header echoed in a text).
_AUTH_VALUE = re.compile(r"\b(?P<scheme>Bearer|Basic)(?P<sep>\s+|%20|\+)(?P<value>[A-Za-z0-9\-._~+/]{8,}=*)")
#: The shapes of the providers' keys (OpenAI/Anthropic ``sk-…``, NVIDIA ``nvapi-…``, Google ``AIza…``).
_KEY_SHAPES = re.compile(r"\b(?P<prefix>sk-|nvapi-|AIza)[A-Za-z0-9_\-]{16,}")
#: A config key whose value is a secret (``api_key``, ``hf_token``, ``password``, ``client_secret``…);
#: ``max_tokens`` and ``tokenizer`` are not.
SECRET_KEY = re.compile(
    r"^(?:api[_\-]?key|apikey|x[_\-]api[_\-]key|(?:hf|access|auth|api|bearer|refresh)?[_\-]?token|"
    r"password|passwd|secret|client[_\-]secret|secret[_\-]key|authorization|credentials?)$",
    re.IGNORECASE,
)

J = TypeVar("J")


def _base64_pieces(raw: bytes) -> set[str]:
    """The base64 of ``raw``, whole and as the characters it fixes inside a longer encoded text.

    Inside a longer text ``raw`` starts at one of three bit alignments; character ``i`` of
    an encoding covers bits ``[6i, 6i + 6)``, so at an offset of ``s`` bytes the characters
    ``ceil(8s/6) … floor(8(s+n)/6)`` depend on ``raw`` alone.
    """
    pieces: set[str] = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(raw).decode("ascii")
        pieces |= {whole, whole.rstrip("=")}
        for shift in (0, 1, 2):
            text = encode(b"\0" * shift + raw).decode("ascii")
            start, end = -(-8 * shift // 6), 8 * (shift + len(raw)) // 6
            if end - start >= MIN_BASE64_PIECE:
                pieces.add(text[start:end])
    return pieces


@lru_cache(maxsize=256)
def secret_forms(secret: str) -> frozenset[str]:
    """Every form in which ``secret`` can reach a text.

    The literal, its percent-encodings (``quote``, ``quote_plus``), its JSON-escaped form,
    and its base64 (standard and URL-safe, padded or not, and the part fixed inside a
    longer encoded text such as ``Basic base64(user:secret)``).  Secrets shorter than
    :data:`MIN_SECRET` characters give nothing.

    Examples
    --------
    >>> sorted(f for f in secret_forms("user:SECRET") if f.startswith("dXNl"))
    ['dXNlcjpTRUNSRV', 'dXNlcjpTRUNSRVQ', 'dXNlcjpTRUNSRVQ=']
    """
    if len(secret) < MIN_SECRET:
        return frozenset()
    forms = {secret, quote(secret, safe=""), quote(secret), quote_plus(secret), json.dumps(secret)[1:-1]}
    forms |= _base64_pieces(secret.encode("utf-8"))
    return frozenset(f for f in forms if len(f) >= MIN_SECRET)


def url_secrets(url: str | None) -> list[str]:
    """The secret parts of ``url``: the user-info (``user:password``, the password, a lone token)
    and the values of token query parameters, literal and percent-decoded.

    >>> url_secrets("http://user:SECRET@host/v1?api_key=abcdef")
    ['user:SECRET', 'SECRET', 'abcdef']
    """
    if not url:
        return []
    found: list[str] = []
    userinfo = re.search(r"://([^/?#@\s]+)@", url)
    if userinfo:  # user:password -> both (Basic auth sends user:password); a lone user part is a token
        info = userinfo.group(1)
        found += [info, info.split(":", 1)[-1]] if ":" in info else [info]
    found += [m.group(0).split("=", 1)[1] for m in _URL_TOKEN.finditer(url)]
    decoded = [unquote(s) for s in found]
    return [s for s in dict.fromkeys([*found, *decoded]) if len(s) >= MIN_SECRET]


#: A URL in a text (up to a space, a quote or an angle bracket).
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]*[^\s\"'<>.,;:!?)\]}]")


def public_url(url: str) -> str:
    """``url`` as results and logs keep it: scheme, host, port and path; the user-info and every
    query value ``***`` whatever their names (``?subscription-key=``, ``code=``); no fragment.

    >>> public_url("https://u:pw@gw.example:8443/v1?subscription-key=abc&api-version=1#x")
    'https://***@gw.example:8443/v1?subscription-key=***&api-version=***'
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rsplit('@', 1)[1]}"
    query = "&".join(
        f"{pair.split('=', 1)[0]}={MASK}" if "=" in pair else MASK for pair in parts.query.split("&") if pair
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def mask_url(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced by ``***``.

    In a URL with a scheme, the user-info and every query value are masked
    (:func:`public_url`); elsewhere, the values of token parameters (``?key=…``,
    ``api_key=…``, ``token=…``).  The rest of the URL stays, so a results file still says
    which server answered.

    >>> mask_url("http://user:SECRET@host:8000/v1?api_key=abc&x=1")
    'http://***@host:8000/v1?api_key=***&x=***'
    """
    text = _URL.sub(lambda m: public_url(m.group(0)), text) if "://" in text else text
    return _URL_TOKEN.sub(r"\g<name>***", text)


def _auth_value(match: re.Match[str]) -> str:
    """``Bearer ***`` / ``Basic ***`` when the value looks like a credential (not ``Basic information``)."""
    value = match["value"]
    if match["scheme"] == "Basic":
        try:
            secret = b":" in base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        except ValueError:
            secret = False
    else:
        secret = len(value) >= 20 or bool(re.search(r"[0-9\-._~+/]", value))
    return f"{match['scheme']}{match['sep']}{MASK}" if secret else match.group(0)


def _mask_shapes(text: str) -> str:
    """The credentials ``text`` shows by their shape (no secret needs to be known)."""
    text = mask_url(text) if ("://" in text or "=" in text) else text
    return _KEY_SHAPES.sub(lambda m: f"{m['prefix']}{MASK}", text)


@lru_cache(maxsize=256)
def _percent_encoded(secret: str) -> re.Pattern[str] | None:
    """``secret`` under any URL encoding: each reserved character literal, ``%XX`` (either case)
    or, for a space, ``+`` (clients differ on which characters they escape)."""

    def alternatives(char: str) -> str:
        if char.isascii() and (char.isalnum() or char in "-._~"):
            return re.escape(char)
        escaped = "".join(f"%{b >> 4:X}[{b & 15:X}{b & 15:x}]" for b in char.encode("utf-8"))
        return f"(?:{re.escape(char)}|{escaped}{'|[+]' if char == ' ' else ''})"

    parts = [alternatives(c) for c in secret]
    return None if all(len(p) <= 2 for p in parts) else re.compile("".join(parts))


def _mask_known(text: str, secrets: Iterable[str]) -> str:
    """Whole forms of every secret first (encoded, then literal/base64), fragments last.

    A fragment masked early could cut a longer encoded form of another secret in two.
    """
    ordered = sorted(set(secrets), key=len, reverse=True)
    for secret in ordered:
        encoded = _percent_encoded(secret)
        if encoded is not None:
            text = encoded.sub(MASK, text)
    forms = sorted({f for secret in ordered for f in secret_forms(secret)}, key=len, reverse=True)
    for form in forms:
        if form in text:
            text = text.replace(form, MASK)
    for secret in ordered:
        for start in range(len(secret) - FRAGMENT + 1):
            fragment = secret[start : start + FRAGMENT]
            if fragment in text and not in_vocabulary(fragment):
                text = text.replace(fragment, MASK)
    return text


def _mask_weak(text: str, weak: Iterable[str]) -> str:
    """A weak secret where it is known to be: after ``Bearer``, ``Basic``, ``Authorization:``,
    ``api_key=``/``key:`` (its value in other text cannot be told from data)."""
    for secret in sorted(set(weak), key=len, reverse=True):
        if secret.casefold() in text.casefold():
            text = re.sub(
                r"(?i)(\b(?:bearer|basic|authorization|x-api-key|api[_-]?key|apikey|key|token)\b[\"']?"
                r"\s*[:=]?\s*[\"']?)" + re.escape(secret) + r"(?![A-Za-z0-9])",
                lambda m: m.group(1) + MASK,
                text,
            )
    return text


def mask(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every form of ``secrets`` and of the remembered secrets replaced by ``***``,
    and every credential shown by its shape (:data:`_AUTH_VALUE`, URL user-info, key prefixes).

    Examples
    --------
    >>> mask("401: got Authorization: Basic dXNlcjpTRUNSRVQ= for sk-1234567890abcdefXYZ", ["SECRET"])
    '401: got Authorization: Basic *** for sk-***'
    >>> mask("bad key 1234567890abcdefXYZ here", ["1234567890abcdefXYZ"])
    'bad key *** here'
    """
    known, weak = split_known(secrets)
    # an Authorization value whole first (a known secret masked inside it would hide its shape),
    # then every known form, then what is left that looks like a credential
    text = _mask_weak(text, weak) if weak else text
    return _mask_shapes(_mask_known(_AUTH_VALUE.sub(_auth_value, text), known))


def scrub(text: str, secrets: Iterable[str | None] = ()) -> str:
    """:data:`MARK` when ``text`` holds a remembered secret (or one of ``secrets``) in any
    decoded form (:func:`~enade_bench.masking.decoded.holds_secret`), or a weak one as a whole
    word (:func:`~enade_bench.masking.decoded.echoes_word`: ``Incorrect API key provided:
    <key>``), else :func:`mask` of it.

    What every error message, answer text and stderr line goes through: a text that held a
    secret is withheld whole, never partly masked.

    >>> remember(["sk-scrub-doc-0123456789"]); scrub("echo SK-SCRUB-DOC-0123456789"); forget_all()
    '[withheld: it held a form of a secret]'
    """
    secrets = list(secrets)
    known, weak = split_known(secrets)
    return MARK if holds_secret(text, known) or echoes_word(text, weak) else mask(text, secrets)


def mask_json(value: J, secrets: Iterable[str | None] = ()) -> J:
    """``value`` (JSON data) with :func:`mask` applied to every string in it."""
    secrets = list(secrets)
    if isinstance(value, str):
        return mask(value, secrets)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {k: mask_json(v, secrets) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [mask_json(v, secrets) for v in value]  # type: ignore[return-value]
    return value


def mask_urls_in(value: J) -> J:
    """``value`` (JSON) with :func:`mask_url` applied to every string that holds a URL."""
    if isinstance(value, str):
        return mask_url(value) if "://" in value else value  # type: ignore[return-value]
    if isinstance(value, dict):
        return {k: mask_urls_in(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [mask_urls_in(v) for v in value]  # type: ignore[return-value]
    return value


def mask_config(value: J, texts: bool = True) -> J:
    """A config (JSON) safe to show: secret-looking keys' values are ``***``, every string masked.

    For configs read back from results files made elsewhere or by an older version.  With
    ``texts=False`` only the keys are masked (the other strings stay as written).

    >>> mask_config({"api": {"api_key": "sk-abc", "max_tokens": 5, "tokenizer": "x"}})
    {'api': {'api_key': '***', 'max_tokens': 5, 'tokenizer': 'x'}}
    """
    if isinstance(value, dict):
        return {  # type: ignore[return-value]
            k: MASK if SECRET_KEY.match(str(k)) and isinstance(v, str) and v else mask_config(v, texts)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [mask_config(v, texts) for v in value]  # type: ignore[return-value]
    if isinstance(value, str) and texts:
        return mask(value)  # type: ignore[return-value]
    return value

"""Surviving rate limits and outages: error classes, retries, a requests-per-minute budget.

Every provider call goes through :func:`call_with_retries`:

* **transient** failures (HTTP 408, 409, 429, 5xx incl. Anthropic's 529, timeouts,
  dropped connections) are retried with exponential backoff and jitter, waiting
  at least what ``Retry-After`` / ``retry-after-ms`` asks;
* **permanent** failures (other 4xx such as 400 and 401, content refusals) raise
  :class:`PermanentFailure`, which the backend turns into a per-question error;
  401 and 403 raise its subclass :class:`AuthFailure`: the backend stops the run after
  :data:`AUTH_FAILURES_TO_STOP` of them in a row (a wrong key fails every request);
* **malformed** replies (a truncated or non-JSON body, an HTML page with status 200,
  a reply without choices) are tried :data:`MALFORMED_TRIES` times (a server that
  sends one broken reply sends the next too); then they become a
  :class:`PermanentFailure` naming the reason (a per-question error that a rerun asks
  again), never an exception that stops the run;
* **fatal** failures (an exhausted quota) and transient failures that outlast the
  retries raise :class:`ApiUnavailableError`: the run stops with one ``error:``
  line, every answer completed so far is already in the intermediate file.

A retry that waits more than :data:`SPEAK_AFTER_S` seconds, or follows an attempt that
took that long (a hung server running into ``timeout_s``), prints one ``retry:`` line
on stderr (reason, attempt k/n, next try in N s) unless ``--quiet``
(:func:`enade_bench.backends.quiet.waits_announced`). ``Retry-After`` is obeyed up to ``model.api.max_retry_after_s``.
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception_type

from enade_bench.backends.api.keys import redact
from enade_bench.backends.quiet import waits_announced
from enade_bench.errors import UserError
from enade_bench.masking import scrub

T = TypeVar("T")

TRANSIENT_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 520, 522, 524, 529})
#: Longest wait read from a ``Retry-After`` header (the policy's ``max_retry_after_s`` caps lower).
MAX_RETRY_AFTER_S = 86400.0
#: Authentication and permission failures: the same key fails every request.
AUTH_STATUS = frozenset({401, 403})
#: How many 401/403 replies in a row stop the run (one ``error:`` line, no further request).
AUTH_FAILURES_TO_STOP = 3
#: How many times a malformed reply (HTML with status 200, truncated JSON, no choices) is tried.
MALFORMED_TRIES = 2
#: A wait (or a failed attempt) longer than this is announced on stderr.
SPEAK_AFTER_S = 5.0
#: How retries wait (a name of this module, so that tests can stand in for the clock).
_sleep = time.sleep


class PermanentFailure(Exception):
    """A request that will fail the same way if sent again (recorded per question)."""


class TransientFailure(Exception):
    """A request worth retrying; ``retry_after`` is the server's wish, in seconds."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class AuthFailure(PermanentFailure):
    """HTTP 401 or 403: the key (or its permissions) is refused."""


class MalformedReply(TransientFailure):
    """A reply that is not the provider's documented shape (retried, then a per-question error)."""


class ApiUnavailableError(UserError):
    """The provider keeps failing (or the quota is gone): stop the run, keep what is done."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry transient failures."""

    max_retries: int = 6
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    #: Longest wait granted to a server's ``Retry-After`` (``model.api.max_retry_after_s``).
    max_retry_after_s: float = 120.0


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    try:
        millis = headers.get("retry-after-ms")
        if millis is not None:
            return min(max(float(millis) / 1000.0, 0.0), MAX_RETRY_AFTER_S)
        value = headers.get("retry-after")
    except (AttributeError, TypeError, ValueError):
        return None
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):
            return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


#: Longest part of a server's error message that is recorded (the rest is cut).
MESSAGE_CHARS = 160


def error_text(status: int, kind: str | None, message: str) -> str:
    """What is recorded of a server's error: its status, its type and a short masked message.

    Nothing a server sends reaches a file verbatim: the message is put on one line, passed
    through :func:`enade_bench.masking.scrub` (withheld whole when it holds a form of a
    secret) and cut to :data:`MESSAGE_CHARS` characters.

    >>> error_text(400, "invalid_request_error", "bad   request  (see docs)")
    'HTTP 400 (invalid_request_error): bad request (see docs)'
    """
    short = scrub(" ".join(str(message).split()))
    if len(short) > MESSAGE_CHARS:
        short = short[: MESSAGE_CHARS - 1] + "…"
    shown_kind = scrub(" ".join(str(kind).split()))[:40] if kind else ""
    return f"HTTP {status}" + (f" ({shown_kind})" if shown_kind else "") + (f": {short}" if short else "")


def body_kind(body: Any) -> str | None:
    """The error's type in an OpenAI / Anthropic / Gemini error body (``type``, ``code``, ``status``)."""
    if not isinstance(body, dict):
        return None
    inner = body.get("error")
    error: dict[str, Any] = inner if isinstance(inner, dict) else body
    for name in ("type", "status", "code"):
        value = error.get(name)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value) and value != "error":
            return str(value)
    return None


def _status_failure(status: int, message: str, headers: Any, body: Any) -> Exception:
    text = error_text(status, body_kind(body), message)
    if status == 429 and "insufficient_quota" in f"{message} {body}":
        return ApiUnavailableError(f"{text} (quota exhausted; retrying will not help)")
    if status in TRANSIENT_STATUS or status >= 500:
        return TransientFailure(text, parse_retry_after(headers))
    if status in AUTH_STATUS:
        return AuthFailure(text)
    return PermanentFailure(text)


def _body_message(body: Any) -> str | None:
    """``error.message`` of an OpenAI / Anthropic error body (``{"error": {"message": …}}``)."""
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    return str(body["message"]) if body.get("message") else None  # openai passes the inner object


def _sdk_errors(module: str, *names: str) -> tuple[type[BaseException], ...]:
    """Exception classes of an SDK that is already imported (never imports one)."""
    sdk = sys.modules.get(module)
    return tuple(getattr(sdk, name) for name in names) if sdk is not None else ()


def classify(exc: BaseException) -> Exception | None:
    """Map an SDK/transport exception to our failure classes (None: not an API failure)."""
    if isinstance(exc, json.JSONDecodeError):  # the SDKs parse a truncated or non-JSON body
        return MalformedReply(f"malformed reply: body is not complete JSON ({exc.msg}, char {exc.pos})")
    status_errors = _sdk_errors("openai", "APIStatusError") + _sdk_errors("anthropic", "APIStatusError")
    if isinstance(exc, status_errors):
        response = getattr(exc, "response", None)
        status = int(getattr(exc, "status_code", 0))
        message = _body_message(getattr(exc, "body", None)) or str(getattr(exc, "message", exc))
        return _status_failure(
            status, message, getattr(response, "headers", None), getattr(exc, "body", None)
        )
    connection = _sdk_errors("openai", "APIConnectionError") + _sdk_errors("anthropic", "APIConnectionError")
    if isinstance(exc, connection):
        kind = "timeout" if "timeout" in type(exc).__name__.lower() else "connection error"
        return TransientFailure(f"{kind}: {scrub(' '.join(str(exc).split()))[:MESSAGE_CHARS]}")
    genai_errors = sys.modules.get("google.genai.errors")
    if genai_errors is not None and isinstance(exc, genai_errors.APIError):
        response = getattr(exc, "response", None)
        message = str(exc.message or exc.status or "")
        return _status_failure(int(exc.code or 0), message, getattr(response, "headers", None), exc.details)
    transport: tuple[type[BaseException], ...] = (TimeoutError, ConnectionError)
    transport += _sdk_errors("httpx", "TransportError") + _sdk_errors("httpx2", "TransportError")
    if isinstance(exc, transport):
        return TransientFailure(f"{type(exc).__name__}: {scrub(' '.join(str(exc).split()))[:MESSAGE_CHARS]}")
    return None


class AuthStreak:
    """401/403 replies in a row, across the backend's threads: the K-th stops the run.

    A wrong key or a key without access fails every request the same way; after
    :data:`AUTH_FAILURES_TO_STOP` refusals in a row (no success between) the run stops
    with one ``error:`` line and sends nothing more. The questions refused so far are
    already recorded as errors, which a rerun asks again.
    """

    def __init__(self, limit: int = AUTH_FAILURES_TO_STOP) -> None:
        self.limit = limit
        self.count = 0
        self.stopped: str | None = None
        self._lock = threading.Lock()

    def check(self) -> None:
        """Raise :class:`ApiUnavailableError` once the run is stopped (no request is sent)."""
        if self.stopped is not None:
            raise ApiUnavailableError(self.stopped)

    def failed(self, label: str, reason: str) -> None:
        """Count one refusal; the K-th raises :class:`ApiUnavailableError`."""
        with self._lock:
            self.count += 1
            if self.count >= self.limit and self.stopped is None:
                self.stopped = (
                    f"{label}: {self.count} requests in a row were refused ({reason}); stopped without "
                    "sending the rest. Check the API key (model.api.api_key or the provider's environment "
                    "variable) and its access to this model; the refused questions are recorded as errors "
                    "and asked again when you rerun"
                )
        self.check()

    def succeeded(self) -> None:
        """A request went through: the streak is broken."""
        with self._lock:
            self.count = 0


class RateLimiter:
    """Spaces request starts evenly so that at most ``rpm`` start in any minute."""

    def __init__(self, rpm: float | None) -> None:
        self.interval = 60.0 / rpm if rpm else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def acquire(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            time.sleep(start - now)


class _Wait:
    """Exponential backoff with jitter, never shorter than the server's Retry-After (capped)."""

    def __init__(self, policy: RetryPolicy, rng: random.Random) -> None:
        self.policy = policy
        self.rng = rng

    def __call__(self, state: RetryCallState) -> float:
        backoff = min(self.policy.max_delay_s, self.policy.base_delay_s * 2 ** (state.attempt_number - 1))
        delay = backoff * self.rng.uniform(0.5, 1.0)
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, TransientFailure) and exc.retry_after is not None:
            delay = max(delay, min(exc.retry_after, self.policy.max_retry_after_s))
        return delay


def _stop(policy: RetryPolicy) -> Callable[[RetryCallState], bool]:
    """Stop after ``max_retries + 1`` attempts, or after :data:`MALFORMED_TRIES` malformed replies."""

    def stop(state: RetryCallState) -> bool:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, MalformedReply) and state.attempt_number >= min(
            MALFORMED_TRIES, policy.max_retries + 1
        ):
            return True
        return state.attempt_number >= policy.max_retries + 1

    return stop


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if value < 10 else f"{value:.0f} s"


def wait_line(label: str, state: RetryCallState, policy: RetryPolicy, took: float) -> str:
    """``retry: openai (gpt-4o at …): HTTP 429: … (attempt 2/7, 61 s); next try in 30 s``."""
    exc = state.outcome.exception() if state.outcome else None
    reason = exc.reason if isinstance(exc, TransientFailure) else str(exc)
    malformed = isinstance(exc, MalformedReply)
    tries = min(MALFORMED_TRIES, policy.max_retries + 1) if malformed else policy.max_retries + 1
    wait = state.next_action.sleep if state.next_action else 0.0
    asked = exc.retry_after if isinstance(exc, TransientFailure) else None
    capped = (
        f", the server asked {_seconds(asked)}, capped by model.api.max_retry_after_s"
        if asked is not None and asked > policy.max_retry_after_s
        else ""
    )
    return (
        f"retry: {label}: {reason} (attempt {state.attempt_number}/{tries}, took {_seconds(took)}{capped}); "
        f"next try in {_seconds(wait)}"
    )


def call_with_retries(
    fn: Callable[[], T],
    policy: RetryPolicy,
    limiter: RateLimiter,
    label: str,
    secrets: Iterable[str] = (),
    sleep: Callable[[float], None] | None = None,
    streak: AuthStreak | None = None,
) -> T:
    """Call ``fn`` (one HTTP request) under the rate budget, retrying transient failures.

    ``streak`` counts 401/403 refusals in a row across requests (:class:`AuthStreak`).

    Raises
    ------
    PermanentFailure
        The request cannot succeed (bad request, auth, refusal).
    ApiUnavailableError
        Retries are exhausted, the quota is gone, or ``streak`` reached its limit.
    """
    if streak is not None:
        streak.check()
        try:
            result = call_with_retries(fn, policy, limiter, label, secrets, sleep)
        except AuthFailure as exc:
            streak.failed(label, str(exc))
            raise
        streak.succeeded()
        return result

    secrets = list(secrets)
    started = [0.0]

    def attempt() -> T:
        limiter.acquire()
        started[0] = time.monotonic()
        try:
            return fn()
        except (PermanentFailure, TransientFailure):
            raise
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            raise failure from exc

    def speak(state: RetryCallState) -> None:
        took = time.monotonic() - started[0]
        wait = state.next_action.sleep if state.next_action else 0.0
        if waits_announced() and max(wait, took) > SPEAK_AFTER_S:
            print(redact(wait_line(label, state, policy, took), secrets), file=sys.stderr, flush=True)

    retrying = Retrying(
        stop=_stop(policy),
        wait=_Wait(policy, random.Random()),
        retry=retry_if_exception_type(TransientFailure),
        before_sleep=speak,
        reraise=True,
        sleep=sleep or _sleep,
    )
    try:
        return retrying(attempt)
    except MalformedReply as exc:
        tries = retrying.statistics.get("attempt_number", MALFORMED_TRIES)
        raise PermanentFailure(redact(f"{exc.reason} (after {tries} attempts)", secrets)) from None
    except TransientFailure as exc:
        raise ApiUnavailableError(
            redact(
                f"{label}: gave up after {policy.max_retries + 1} attempts ({exc.reason}); answers "
                "completed so far are saved, rerun the same command to resume",
                secrets,
            )
        ) from None
    except ApiUnavailableError as exc:
        raise ApiUnavailableError(redact(f"{label}: {exc}", secrets)) from None
    except PermanentFailure as exc:
        raise type(exc)(redact(str(exc), secrets)) from None

"""Surviving rate limits and outages: error classes, retries, a requests-per-minute budget.

Every provider call goes through :func:`call_with_retries`:

* **transient** failures (HTTP 408, 409, 429, 5xx incl. Anthropic's 529, timeouts,
  dropped connections) are retried with exponential backoff and jitter, waiting
  at least what ``Retry-After`` / ``retry-after-ms`` asks;
* **permanent** failures (other 4xx such as 400 and 401, content refusals) raise
  :class:`PermanentFailure`, which the backend turns into a per-question error;
* **malformed** replies (a truncated or non-JSON body, an HTML page with status 200,
  a reply without choices) are retried like transient ones; when they outlast the
  retries they become a :class:`PermanentFailure` naming the reason (a per-question
  error that a rerun asks again), never an exception that stops the run;
* **fatal** failures (an exhausted quota) and transient failures that outlast the
  retries raise :class:`ApiUnavailableError`: the run stops with one ``error:``
  line, every answer completed so far is already in the intermediate file.
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

from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from enade_bench.backends.api.keys import redact
from enade_bench.errors import UserError

T = TypeVar("T")

TRANSIENT_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 520, 522, 524, 529})
#: Longest wait accepted from a ``Retry-After`` header.
MAX_RETRY_AFTER_S = 600.0


class PermanentFailure(Exception):
    """A request that will fail the same way if sent again (recorded per question)."""


class TransientFailure(Exception):
    """A request worth retrying; ``retry_after`` is the server's wish, in seconds."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


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


def _status_failure(status: int, message: str, headers: Any, body: Any) -> Exception:
    text = f"HTTP {status}: {message}".strip()
    if status == 429 and "insufficient_quota" in f"{message} {body}":
        return ApiUnavailableError(f"{text} (quota exhausted; retrying will not help)")
    if status in TRANSIENT_STATUS or status >= 500:
        return TransientFailure(text, parse_retry_after(headers))
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
        return TransientFailure(f"{kind}: {exc}")
    genai_errors = sys.modules.get("google.genai.errors")
    if genai_errors is not None and isinstance(exc, genai_errors.APIError):
        response = getattr(exc, "response", None)
        message = str(exc.message or exc.status or "")
        return _status_failure(int(exc.code or 0), message, getattr(response, "headers", None), exc.details)
    transport: tuple[type[BaseException], ...] = (TimeoutError, ConnectionError)
    transport += _sdk_errors("httpx", "TransportError") + _sdk_errors("httpx2", "TransportError")
    if isinstance(exc, transport):
        return TransientFailure(f"{type(exc).__name__}: {exc}")
    return None


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
    """Exponential backoff with jitter, never shorter than the server's Retry-After."""

    def __init__(self, policy: RetryPolicy, rng: random.Random) -> None:
        self.policy = policy
        self.rng = rng

    def __call__(self, state: RetryCallState) -> float:
        backoff = min(self.policy.max_delay_s, self.policy.base_delay_s * 2 ** (state.attempt_number - 1))
        delay = backoff * self.rng.uniform(0.5, 1.0)
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, TransientFailure) and exc.retry_after is not None:
            delay = max(delay, exc.retry_after)
        return delay


def call_with_retries(
    fn: Callable[[], T],
    policy: RetryPolicy,
    limiter: RateLimiter,
    label: str,
    secrets: Iterable[str] = (),
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Call ``fn`` (one HTTP request) under the rate budget, retrying transient failures.

    Raises
    ------
    PermanentFailure
        The request cannot succeed (bad request, auth, refusal).
    ApiUnavailableError
        Retries are exhausted, or the quota is gone.
    """

    secrets = list(secrets)

    def attempt() -> T:
        limiter.acquire()
        try:
            return fn()
        except (PermanentFailure, TransientFailure):
            raise
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            raise failure from exc

    retrying = Retrying(
        stop=stop_after_attempt(policy.max_retries + 1),
        wait=_Wait(policy, random.Random()),
        retry=retry_if_exception_type(TransientFailure),
        reraise=True,
        sleep=sleep,
    )
    try:
        return retrying(attempt)
    except MalformedReply as exc:
        raise PermanentFailure(
            redact(f"{exc.reason} (after {policy.max_retries + 1} attempts)", secrets)
        ) from None
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
        raise PermanentFailure(redact(str(exc), secrets)) from None

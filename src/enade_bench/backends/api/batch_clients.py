"""The providers' batch APIs behind one small interface (submit, status, results).

* OpenAI and Maritaca: upload a JSONL file (``purpose="batch"``), create a batch
  on ``/v1/chat/completions``; results are the output and error files, matched by
  ``custom_id``.  Maritaca's batch API is the same protocol at
  ``https://chat.maritaca.ai/api``.
* Anthropic: Message Batches (``custom_id`` + ``params``); results are a JSONL
  stream of ``succeeded`` / ``errored`` / ``canceled`` / ``expired`` entries.
* Google Gemini: ``batches.create`` with inlined requests; responses come back
  in request order.

Each result is a :class:`BatchResult`: an answer, a permanent error (recorded
for the question), or ``retry`` (rate limits, 5xx, expiry, cancellation, a
missing line), which the runner re-queues in a new job.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from enade_bench.backends.api.backend import ApiBackend
from enade_bench.backends.api.resilience import TRANSIENT_STATUS, body_kind, error_text
from enade_bench.backends.api.wire import ProviderJson
from enade_bench.errors import UserError
from enade_bench.results.records import Usage

CHAT_ENDPOINT = "/v1/chat/completions"
#: HTTP status of each Anthropic error type (batch results carry the type only).
ANTHROPIC_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}
#: The ``status`` a live Gemini error names for each HTTP code (batch results carry the code only).
GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
#: Anthropic error types that will fail again if the request is resent.
ANTHROPIC_PERMANENT = frozenset(
    {
        "invalid_request_error",
        "authentication_error",
        "permission_error",
        "not_found_error",
        "request_too_large",
    }
)


@dataclass(frozen=True)
class JobStatus:
    """``pending`` (still running) or ``ended`` (results can be read); ``detail`` for humans."""

    state: Literal["pending", "ended"]
    detail: str


@dataclass(frozen=True)
class BatchResult:
    """One request's outcome: ``text``, or ``error`` (permanent), or ``retry`` (re-queue)."""

    text: str | None = None
    error: str | None = None
    retry: bool = False
    #: The tokens the result reports (a batch request has no latency of its own).
    usage: Usage | None = None


class BatchClient(Protocol):
    def submit(self, requests: Sequence[tuple[str, ProviderJson]], label: str) -> str:
        """Submit ``(request id, body)`` pairs as one job; return the job id."""
        ...

    def status(self, job_id: str) -> JobStatus: ...

    def results(self, job_id: str, request_ids: Sequence[str]) -> dict[str, BatchResult]:
        """Results of an ended job by request id (ids absent from the answer are missing)."""
        ...


def _http_result(backend: ApiBackend, status: int, body: Any) -> BatchResult:
    if status == 200:
        outcome = backend.parse(body)
        return BatchResult(outcome.text, outcome.error, usage=outcome.usage)
    message = body.get("error", {}).get("message", "") if isinstance(body, dict) else str(body)
    reason = error_text(status, body_kind(body), message)  # status, type, short scrubbed message
    return BatchResult(error=reason, retry=status in TRANSIENT_STATUS or status >= 500)


class _SdkClient:
    """A batch client on the backend's SDK client (what parses a result is the backend's)."""

    def __init__(self, backend: ApiBackend) -> None:
        self.backend = backend
        self.client = backend.client


class OpenAIBatchClient(_SdkClient):
    """OpenAI Batch API (also Maritaca's, through its base URL)."""

    def submit(self, requests: Sequence[tuple[str, ProviderJson]], label: str) -> str:
        lines = [
            json.dumps(
                {"custom_id": rid, "method": "POST", "url": CHAT_ENDPOINT, "body": body}, ensure_ascii=False
            )
            for rid, body in requests
        ]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        upload = self.client.files.create(file=(f"{label}.jsonl", io.BytesIO(data)), purpose="batch")
        batch = self.client.batches.create(
            input_file_id=upload.id,
            endpoint=CHAT_ENDPOINT,
            completion_window="24h",
            metadata={"enade_bench": label[:512]},
        )
        return str(batch.id)

    def status(self, job_id: str) -> JobStatus:
        batch = self.client.batches.retrieve(job_id)
        counts = batch.request_counts
        done = f" ({counts.completed}/{counts.total} done, {counts.failed} failed)" if counts else ""
        state: Literal["pending", "ended"] = (
            "ended" if batch.status in {"completed", "failed", "expired", "cancelled"} else "pending"
        )
        return JobStatus(state, f"{batch.status}{done}")

    def results(self, job_id: str, request_ids: Sequence[str]) -> dict[str, BatchResult]:
        batch = self.client.batches.retrieve(job_id)
        out: dict[str, BatchResult] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            text = self.client.files.content(file_id).text
            for line in text.splitlines():
                if not line.strip():
                    continue
                entry = json.loads(line)
                rid = entry.get("custom_id")
                response = entry.get("response")
                if response:
                    out[rid] = _http_result(
                        self.backend, int(response.get("status_code", 0)), response.get("body")
                    )
                else:
                    error = entry.get("error") or {}
                    reason = f"{error.get('code', 'error')}: {error.get('message', '')}"
                    out[rid] = BatchResult(error=reason, retry=True)
        if batch.status == "failed" and not out:
            errors = getattr(batch, "errors", None)
            reason = f"batch failed: {errors.model_dump() if errors is not None else 'no details'}"
            return {rid: BatchResult(error=reason, retry=True) for rid in request_ids}
        return out


class AnthropicBatchClient(_SdkClient):
    """Anthropic Message Batches."""

    def submit(self, requests: Sequence[tuple[str, ProviderJson]], label: str) -> str:
        batch = self.client.messages.batches.create(
            requests=[{"custom_id": rid, "params": body} for rid, body in requests]
        )
        return str(batch.id)

    def status(self, job_id: str) -> JobStatus:
        batch = self.client.messages.batches.retrieve(job_id)
        counts = batch.request_counts
        detail = f"{batch.processing_status} ({counts.succeeded} succeeded, {counts.processing} processing)"
        return JobStatus("ended" if batch.processing_status == "ended" else "pending", detail)

    def results(self, job_id: str, request_ids: Sequence[str]) -> dict[str, BatchResult]:
        out: dict[str, BatchResult] = {}
        for entry in self.client.messages.batches.results(job_id):
            result = entry.result
            if result.type == "succeeded":
                outcome = self.backend.parse(result.message.model_dump())
                out[entry.custom_id] = BatchResult(outcome.text, outcome.error, usage=outcome.usage)
            elif result.type == "errored":
                error = result.error.error
                reason = error_text(ANTHROPIC_STATUS.get(error.type, 500), error.type, error.message)
                out[entry.custom_id] = BatchResult(error=reason, retry=error.type not in ANTHROPIC_PERMANENT)
            else:  # canceled / expired
                out[entry.custom_id] = BatchResult(error=result.type, retry=True)
        return out


class GeminiBatchClient(_SdkClient):
    """Gemini Batch Mode with inlined requests (responses keep the request order)."""

    def submit(self, requests: Sequence[tuple[str, ProviderJson]], label: str) -> str:
        inlined = [{**body, "metadata": {"key": rid}} for rid, body in requests]
        job = self.client.batches.create(
            model=self.backend.cfg.model, src=inlined, config={"display_name": label[:128]}
        )
        return str(job.name)

    def status(self, job_id: str) -> JobStatus:
        job = self.client.batches.get(name=job_id)
        state = str(getattr(job.state, "value", job.state))
        ended = state in {
            "JOB_STATE_SUCCEEDED",
            "JOB_STATE_FAILED",
            "JOB_STATE_CANCELLED",
            "JOB_STATE_EXPIRED",
        }
        return JobStatus("ended" if ended else "pending", state)

    def results(self, job_id: str, request_ids: Sequence[str]) -> dict[str, BatchResult]:
        job = self.client.batches.get(name=job_id)
        responses = (job.dest.inlined_responses if job.dest is not None else None) or []
        out: dict[str, BatchResult] = {}
        for index, item in enumerate(responses):
            key = (item.metadata or {}).get("key") if item.metadata else None
            rid = key or (request_ids[index] if index < len(request_ids) else None)
            if rid is None:
                continue
            if item.error is not None:
                code = int(item.error.code or 0)
                reason = error_text(code, GEMINI_STATUS.get(code), item.error.message or "")
                out[rid] = BatchResult(
                    error=reason, retry=code in TRANSIENT_STATUS or code >= 500 or code == 0
                )
            elif item.response is not None:
                outcome = self.backend.parse(item.response.model_dump(mode="json", exclude_none=True))
                out[rid] = BatchResult(outcome.text, outcome.error, usage=outcome.usage)
        return out


def make_batch_client(backend: ApiBackend) -> BatchClient:
    """The batch client of the backend's provider.

    Raises
    ------
    UserError
        For providers without a batch API (NVIDIA NIM, OpenAI-compatible servers).
    """
    provider = backend.cfg.provider
    if provider in {"openai", "maritaca"}:
        return OpenAIBatchClient(backend)
    if provider == "anthropic":
        return AnthropicBatchClient(backend)
    if provider == "google":
        return GeminiBatchClient(backend)
    raise UserError(
        f"model.api.provider: '{provider}' has no batch API; run without --batch-submit/--batch-fetch "
        "(batch APIs: openai, anthropic, google, maritaca)"
    )

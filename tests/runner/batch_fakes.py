"""Loopback fakes of the batch APIs (OpenAI/Maritaca, Anthropic, Gemini) and their live endpoints.

Each fake answers live requests and batch jobs with the same decisions, keyed
on the question text, so a batch run and a live run can be compared file by
file.  ``fail_first`` request ids fail transiently on their first batch attempt
(a 5xx line, an expired request), which the fetch must re-queue.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from api_fakes import (
    Reply,
    Request,
    answer_for,
    anthropic_error,
    anthropic_message,
    gemini_error,
    gemini_response,
    openai_completion,
)

REJECT = "8.080"  # the first demo question: a permanent 400 everywhere
REJECT_MESSAGE = "Invalid request: prompt rejected by policy."


class _Base:
    def __init__(self, fail_first: dict[str, str] | None = None) -> None:
        self.fail_first = fail_first or {}  # request id -> "server_error" | "expired"
        self.attempts: Counter[str] = Counter()
        self.complete = False  # batches report "in progress" until a test sets this
        self.jobs: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        self.downloads = 0

    def failure(self, rid: str) -> str | None:
        self.attempts[rid] += 1
        return self.fail_first.get(rid) if self.attempts[rid] == 1 else None


class OpenAIBatchFake(_Base):
    """``/chat/completions``, ``/files``, ``/batches`` under ``prefix`` (``/v1``; Maritaca: ``/api``)."""

    def __init__(self, prefix: str = "/v1", fail_first: dict[str, str] | None = None) -> None:
        super().__init__(fail_first)
        self.prefix = prefix
        self.files: dict[str, bytes] = {}
        self.job_prefix = "batch_"  # what the provider's batch ids start with

    @staticmethod
    def _chat(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        text = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if REJECT in text:
            return 400, {
                "error": {
                    "message": REJECT_MESSAGE,
                    "type": "invalid_request_error",
                    "param": None,
                    "code": None,
                }
            }
        return 200, openai_completion(answer_for(text))

    def _batch(self, job_id: str) -> dict[str, Any]:
        n = len(self.jobs[job_id])
        done = self.complete
        return {
            "id": job_id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "errors": None,
            "input_file_id": f"in-{job_id}",
            "completion_window": "24h",
            "status": "completed" if done else "in_progress",
            "output_file_id": f"out-{job_id}" if done else None,
            "error_file_id": f"err-{job_id}" if done else None,
            "created_at": 1711471533,
            "request_counts": {"total": n, "completed": n if done else 0, "failed": 0},
            "metadata": {},
        }

    def _run(self, job_id: str) -> None:
        out, err = [], []
        for rid, body in self.jobs[job_id]:
            failure = self.failure(rid)
            line: dict[str, Any] = {"id": f"batch_req_{rid}", "custom_id": rid, "error": None}
            if failure == "expired":
                line.update(
                    response=None,
                    error={
                        "code": "batch_expired",
                        "message": "This request could not be executed before the completion window expired.",
                    },
                )
                err.append(line)
                continue
            status, payload = (
                (500, {"error": {"message": "The server had an error", "type": "server_error"}})
                if failure
                else self._chat(body)
            )
            line["response"] = {"status_code": status, "request_id": f"req_{rid}", "body": payload}
            (out if status == 200 else err).append(line)
        self.files[f"out-{job_id}"] = "".join(json.dumps(x) + "\n" for x in out).encode()
        self.files[f"err-{job_id}"] = "".join(json.dumps(x) + "\n" for x in err).encode()

    def __call__(self, req: Request) -> Reply:
        p = self.prefix
        if req.method == "POST" and req.path == f"{p}/chat/completions":
            status, payload = self._chat(req.json())
            return Reply(status, payload)
        if req.method == "POST" and req.path == f"{p}/files":
            file_id = f"file-{len(self.files)}"
            self.files[file_id] = req.body
            return Reply(
                200,
                {
                    "id": file_id,
                    "object": "file",
                    "bytes": len(req.body),
                    "created_at": 1,
                    "filename": "requests.jsonl",
                    "purpose": "batch",
                    "status": "processed",
                },
            )
        if req.method == "POST" and req.path == f"{p}/batches":
            body = req.json()
            job_id = f"{self.job_prefix}{len(self.jobs)}"
            lines = [
                json.loads(x)
                for x in self.files[body["input_file_id"]].split(b"\n")
                if x.startswith(b'{"custom_id"')
            ]
            assert all(x["url"] == body["endpoint"] == "/v1/chat/completions" for x in lines)
            self.jobs[job_id] = [(x["custom_id"], x["body"]) for x in lines]
            return Reply(200, self._batch(job_id))
        m = re.fullmatch(rf"{p}/batches/([\w-]+)", req.path)
        if req.method == "GET" and m:
            if self.complete and f"out-{m[1]}" not in self.files:
                self._run(m[1])
            return Reply(200, self._batch(m[1]))
        m = re.fullmatch(rf"{p}/files/([\w-]+)/content", req.path)
        if req.method == "GET" and m:
            self.downloads += 1
            return Reply(200, raw=self.files[m[1]])
        return Reply(
            404, {"error": {"message": f"no route {req.method} {req.path}", "type": "invalid_request_error"}}
        )


class AnthropicBatchFake(_Base):
    """``/v1/messages`` and ``/v1/messages/batches`` (results as JSONL at ``results_url``)."""

    def __init__(self, base_url: str = "", fail_first: dict[str, str] | None = None) -> None:
        super().__init__(fail_first)
        self.base_url = base_url
        self.results: dict[str, bytes] = {}

    @staticmethod
    def _message(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        text = body["messages"][0]["content"]
        if REJECT in text:
            return 400, {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": REJECT_MESSAGE},
            }
        return 200, anthropic_message(answer_for(text))

    def _batch(self, job_id: str) -> dict[str, Any]:
        n, done = len(self.jobs[job_id]), self.complete
        return {
            "id": job_id,
            "type": "message_batch",
            "processing_status": "ended" if done else "in_progress",
            "request_counts": {
                "processing": 0 if done else n,
                "succeeded": n if done else 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "ended_at": "2024-08-20T18:37:24.100435Z" if done else None,
            "created_at": "2024-08-20T18:37:24.100435Z",
            "expires_at": "2024-08-21T18:37:24.100435Z",
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.base_url}/v1/messages/batches/{job_id}/results" if done else None,
        }

    def _run(self, job_id: str) -> None:
        lines = []
        for rid, params in self.jobs[job_id]:
            failure = self.failure(rid)
            if failure == "expired":
                result: dict[str, Any] = {"type": "expired"}
            elif failure:
                result = {
                    "type": "errored",
                    "error": {
                        "type": "error",
                        "error": {"type": "api_error", "message": "Internal server error"},
                    },
                }
            else:
                status, payload = self._message(params)
                result = (
                    {"type": "succeeded", "message": payload}
                    if status == 200
                    else {"type": "errored", "error": payload}
                )
            lines.append({"custom_id": rid, "result": result})
        self.results[job_id] = "".join(json.dumps(x) + "\n" for x in reversed(lines)).encode()  # any order

    def __call__(self, req: Request) -> Reply:
        if req.method == "POST" and req.path == "/v1/messages":
            status, payload = self._message(req.json())
            return Reply(status, payload)
        if req.method == "POST" and req.path == "/v1/messages/batches":
            job_id = f"msgbatch_{len(self.jobs)}"
            self.jobs[job_id] = [(r["custom_id"], r["params"]) for r in req.json()["requests"]]
            return Reply(200, self._batch(job_id))
        m = re.fullmatch(r"/v1/messages/batches/(\w+)(/results)?", req.path)
        if req.method == "GET" and m:
            if self.complete and m[1] not in self.results:
                self._run(m[1])
            if m[2]:
                self.downloads += 1
                return Reply(200, raw=self.results[m[1]])
            return Reply(200, self._batch(m[1]))
        return anthropic_error(404, "not_found_error", f"no route {req.method} {req.path}")


class GeminiBatchFake(_Base):
    """``models/M:generateContent``, ``models/M:batchGenerateContent`` and ``batches/ID``."""

    def __init__(self, fail_first: dict[str, str] | None = None) -> None:
        super().__init__(fail_first)
        self.outputs: dict[str, list[dict[str, Any]]] = {}

    @staticmethod
    def _generate(request: dict[str, Any]) -> dict[str, Any]:
        text = request["contents"][0]["parts"][0]["text"]
        if REJECT in text:
            return {"error": {"code": 400, "message": REJECT_MESSAGE, "status": "INVALID_ARGUMENT"}}
        return {"response": gemini_response(answer_for(text))}

    def _operation(self, job_id: str) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch",
            "model": "models/gemini-2.5-flash",
            "displayName": "job",
            "name": job_id,
            "state": "BATCH_STATE_SUCCEEDED" if self.complete else "BATCH_STATE_RUNNING",
            "createTime": "2025-07-01T10:00:00Z",
        }
        if self.complete:
            meta["output"] = {"inlinedResponses": {"inlinedResponses": self.outputs[job_id]}}
        return {"name": job_id, "metadata": meta, "done": self.complete}

    def _run(self, job_id: str) -> None:
        out = []
        for rid, request in self.jobs[job_id]:
            failure = self.failure(rid)
            if failure:
                out.append(
                    {
                        "error": {
                            "code": 503 if failure == "server_error" else 504,
                            "message": "The service is currently unavailable.",
                        }
                    }
                )
            else:
                out.append(self._generate(request))
        self.outputs[job_id] = out

    def __call__(self, req: Request) -> Reply:
        m = re.fullmatch(r"/v1(?:beta)?/models/([\w.\-]+):(generateContent|batchGenerateContent)", req.path)
        if req.method == "POST" and m and m[2] == "generateContent":
            result = self._generate(req.json())
            if "error" in result:
                return gemini_error(400, "INVALID_ARGUMENT", REJECT_MESSAGE)
            return Reply(200, result["response"])
        if req.method == "POST" and m:
            batch = req.json()["batch"]
            entries = batch["inputConfig"]["requests"]["requests"]
            job_id = f"batches/job{len(self.jobs)}"
            self.jobs[job_id] = [(e["metadata"]["key"], e["request"]) for e in entries]
            if self.complete:
                self._run(job_id)
            return Reply(200, self._operation(job_id))
        m = re.fullmatch(r"/v1(?:beta)?/(batches/\w+)", req.path)
        if req.method == "GET" and m:
            if self.complete and m[1] not in self.outputs:
                self._run(m[1])
            if self.complete:
                self.downloads += 1
            return Reply(200, self._operation(m[1]))
        return gemini_error(404, "NOT_FOUND", f"no route {req.method} {req.path}")

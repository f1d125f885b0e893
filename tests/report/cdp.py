"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (no websocket,
no driver, nothing downloaded): Debian's chromium, one browser session for many pages.

The browser reads commands on its fd 3 and writes replies and events on fd 4, each message
one JSON object ended by a NUL byte.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import signal
import time
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--remote-debugging-pipe",
]


class Browser:
    """One headless chromium and one page in it; events are kept for the checks."""

    def __init__(self, profile: Path, size: tuple[int, int] = (1280, 1600)) -> None:
        assert CHROMIUM is not None
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        # above 4, so that putting one at fd 3 or 4 cannot overwrite the other
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_chrome_r, from_chrome_w)]
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        args = [
            CHROMIUM,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={size[0]},{size[1]}",
            "about:blank",
        ]
        self.pid = os.posix_spawn(
            CHROMIUM,
            args,
            dict(os.environ),
            file_actions=[
                (os.POSIX_SPAWN_DUP2, ends[0], 3),
                (os.POSIX_SPAWN_DUP2, ends[1], 4),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
            ],
        )
        for fd in ends:
            os.close(fd)
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=None)["targetId"]
        self.session = self.call(
            "Target.attachToTarget", {"targetId": target, "flatten": True}, session=None
        )["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(f"{domain}.enable")

    def _read(self, timeout: float) -> dict[str, Any] | None:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._r], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        data: dict[str, Any] = json.loads(message)
        return data

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str | bool | None = True,
        timeout: float = 30,
    ) -> dict[str, Any]:
        """Send one command and wait for its reply (events that come first are kept)."""
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session is True:
            message["sessionId"] = self.session
        elif isinstance(session, str):
            message["sessionId"] = session
        os.write(self._w, json.dumps(message).encode() + b"\0")
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            reply = self._read(end - time.monotonic())
            if reply is None:
                break
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self.events.append(reply)
        raise TimeoutError(f"{method}: no reply in {timeout} s")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url: str, ready: str = "document.readyState === 'complete'", timeout: float = 30) -> None:
        """Load ``url`` (after ``about:blank``, so a fragment change is a whole load) until ``ready`` holds."""
        self.call("Page.navigate", {"url": "about:blank"})
        self.call("Page.navigate", {"url": url})
        self.wait(ready, timeout)

    def wait(self, condition: str, timeout: float = 30) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                if self.evaluate(f"Boolean({condition})"):
                    return
            except (RuntimeError, TimeoutError):  # not loaded yet, or busy loading
                pass
            time.sleep(0.05)
        raise TimeoutError(f"{condition}: not true after {timeout} s")

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries (CSP violations) so far."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                out.append(str(p.get("exceptionDetails", {}).get("text")))
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") == "error":
                out.append(" ".join(str(a.get("value")) for a in p.get("args", [])))
            elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(str(p["entry"].get("text")))
        return out

    def requests(self) -> list[str]:
        """URLs the pages asked for, but the pages themselves and ``data:`` URLs."""
        urls = [
            e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"
        ]
        pages = {
            e["params"]["request"]["url"]
            for e in self.events
            if e["method"] == "Network.requestWillBeSent" and e["params"].get("type") == "Document"
        }
        return [u for u in urls if u not in pages and not u.startswith("data:") and u != "about:blank"]

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False})["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.call("Browser.close", session=None, timeout=5)
        except (RuntimeError, TimeoutError, OSError):
            pass
        for _ in range(100):  # up to 10 s, then killed
            if os.waitpid(self.pid, os.WNOHANG)[0]:
                break
            time.sleep(0.1)
        else:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self._w)
        os.close(self._r)

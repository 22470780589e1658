"""Headless Chromium over the DevTools protocol on a pipe: open a page, record what it asked for
and what went wrong, evaluate JavaScript in it. Standard library only."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync",
         "--disable-default-apps", "--remote-debugging-pipe"]


def chromium() -> str | None:
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)


class Page:
    """One tab. `requests` holds every URL the page requested; `problems` every console
    error, uncaught exception and browser log entry of level error."""

    def __init__(self, executable: str):
        self._profile = tempfile.mkdtemp(prefix="chromium-profile-")
        to_browser, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # Chromium reads commands on fd 3 and writes answers on fd 4.
        self._process = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{to_browser} 4>&{from_browser_w}', executable,
             *FLAGS, f"--user-data-dir={self._profile}", "about:blank"],
            pass_fds=(to_browser, from_browser_w), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self._session: str | None = None
        self.requests: list[str] = []
        self.problems: list[str] = []
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.send("Target.attachToTarget", targetId=target,
                                  flatten=True)["sessionId"]
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.send(f"{domain}.enable")

    def open(self, url: str, timeout_s: float = 60) -> None:
        self.send("Page.navigate", url=url)
        self._wait_for("Page.loadEventFired", timeout_s)

    def evaluate(self, expression: str):
        answer = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in answer:
            raise AssertionError(f"{expression!r} failed: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def wait_until(self, expression: str, timeout_s: float = 30) -> None:
        deadline = time.monotonic() + timeout_s
        while not self.evaluate(expression):
            if time.monotonic() > deadline:
                raise AssertionError(f"still false after {timeout_s}s: {expression}")
            time.sleep(0.2)

    def send(self, method: str, **params) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if self._session and not method.startswith("Target."):
            message["sessionId"] = self._session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._receive(timeout_s=60)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise AssertionError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._record(reply)

    def close(self) -> None:
        self._process.kill()
        self._process.wait(timeout=30)
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self._profile, ignore_errors=True)

    def _wait_for(self, event: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            message = self._receive(max(0.1, deadline - time.monotonic()))
            self._record(message)
            if message.get("method") == event:
                return

    def _record(self, message: dict) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Runtime.exceptionThrown":
            self.problems.append(f"exception: {params['exceptionDetails']}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.problems.append(f"console.{params['type']}: {params.get('args')}")
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.problems.append(f"log: {params['entry'].get('text')}")

    def _receive(self, timeout_s: float) -> dict:
        deadline = time.monotonic() + timeout_s
        while b"\0" not in self._buffer:
            chunk = _read_some(self._from_browser, deadline)
            if not chunk:
                raise AssertionError("chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)


def _read_some(fd: int, deadline: float) -> bytes:
    ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
    if not ready:
        raise AssertionError("no answer from chromium in time")
    return os.read(fd, 1 << 20)


def file_url(path: Path) -> str:
    return path.resolve().as_uri()

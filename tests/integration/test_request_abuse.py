"""Malformed and abusive clients against the real server, over HTTP (`serve --http`) and stdio
(`serve`): each malformed class gets a 4xx / JSON-RPC error with no traceback in the log; a
slow, a partial and a flooding client are cut off at the configured limits (1 s timeouts,
a few connections) while a normal client keeps being served. Loopback only.
"""

from __future__ import annotations

import json
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx2
import pytest
from http_harness import cli, http_server, server_env

WAIT_S = 60  # generous bound on any one answer; never asserted as a speed
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream",
           "mcp-protocol-version": "2025-06-18"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "abuse-test", "version": "1"}}}
PING = b'{"jsonrpc":"2.0","id":%d,"method":"ping"%s}'

# The classes, with no body named in the code that refuses them: each must get a 4xx.
MALFORMED = {
    "deep-arrays": PING % (40, b',"params":{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
    "deep-objects": PING % (41, b',"params":' + b'{"a":' * 3_000 + b"1" + b"}" * 3_001),
    "huge-exponent": PING % (42, b',"params":{"n":1e999999}'),
    "100k-digit-integer": PING % (43, b',"params":{"n":' + b"7" * 100_000 + b"}"),
    "invalid-utf8": PING % (44, b',"params":{"s":"\xc3\x28 \xff"}'),
    "duplicate-keys": b'{"jsonrpc":"2.0","id":45,"method":"ping","method":"tools/list"}',
    "params-a-list": PING % (46, b',"params":[1,2]'),
    "id-an-object": b'{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}',
    "nan": PING % (47, b',"params":{"n":NaN}'),
    "batch": b"[" + PING % (48, b"") + b"]",
}
WRONG_ARGUMENT = {"jsonrpc": "2.0", "id": 50, "method": "tools/call",
                  "params": {"name": "memory_search", "arguments": {"query": {"not": "text"}}}}


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("abuse") / "memory"
    (root / "Notes").mkdir(parents=True)
    (root / "Notes" / "A.md").write_text("# A\n\nAn ordinary note.\n", encoding="utf-8")
    return root


def token(root: Path, name: str) -> str:
    made = cli("token", "create", "--name", name, "--scope", "write", "--root", str(root))
    assert made.returncode == 0, made.stderr
    return made.stdout.split()[0]


@pytest.fixture(scope="module")
def tokens(root) -> dict[str, str]:
    return {name: token(root, name) for name in ("normal", "flood", "sessions")}


@pytest.fixture(scope="module")
def guarded(root, tokens, tmp_path_factory):
    """--auth tokens with small limits: 1 s to send headers or a body, 3 connections, 60
    requests a minute and 2 sessions per token."""
    with http_server(root, tmp_path_factory.mktemp("logs") / "serve.stderr", "--no-watch",
                     "--auth", "tokens", "--header-timeout", "1", "--body-timeout", "1",
                     "--max-connections", "3", "--rate-limit", "60",
                     "--max-sessions-per-token", "2") as server:
        yield server


def bearer(value: str) -> dict[str, str]:
    return {**HEADERS, "authorization": f"Bearer {value}"}


def post(url: str, body: bytes, headers: dict[str, str]) -> httpx2.Response:
    return httpx2.post(url, content=body, headers=headers, timeout=WAIT_S)


def open_session(url: str, headers: dict[str, str]) -> str:
    opened = post(url, json.dumps(INITIALIZE).encode(), headers)
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    done = post(url, b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
                {**headers, "mcp-session-id": session})
    assert done.status_code == 202, done.text
    return session


def served(server, value: str) -> bool:
    """A normal client: a session opened (one POST: the limits count requests) and ended."""
    headers = bearer(value)
    opened = post(server.url, json.dumps(INITIALIZE).encode(), headers)
    if opened.status_code != 200 or '"protocolVersion"' not in opened.text:
        return False
    httpx2.delete(server.url, headers={**headers, "mcp-session-id": opened.headers[
        "mcp-session-id"]}, timeout=WAIT_S)
    return True


def no_traceback(log: str) -> None:
    assert "Traceback" not in log and "Internal Server Error" not in log, log[-3000:]


# -- HTTP: malformed requests ---------------------------------------------------------------

@pytest.mark.parametrize("name", MALFORMED)
def test_each_malformed_request_gets_400_over_http_and_no_traceback(guarded, tokens, name):
    refused = post(guarded.url, MALFORMED[name], bearer(tokens["normal"]))
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["code"] in (-32700, -32600)
    assert len(refused.json()["error"]["message"]) <= 300
    assert served(guarded, tokens["normal"])
    no_traceback(guarded.log)


def test_a_tool_argument_of_the_wrong_type_is_a_clear_error_over_http(guarded, tokens):
    headers = bearer(tokens["normal"])
    session = open_session(guarded.url, headers)
    answer = post(guarded.url, json.dumps(WRONG_ARGUMENT).encode(),
                  {**headers, "mcp-session-id": session})
    data = json.loads(answer.text.split("data: ", 1)[1]) if "data: " in answer.text \
        else answer.json()
    assert data["result"]["isError"] and "invalid arguments for memory_search" in \
        data["result"]["content"][0]["text"]
    no_traceback(guarded.log)


# -- HTTP: slow, partial and flooding clients -----------------------------------------------

def connect(url: str) -> socket.socket:
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
    return sock


def until_closed(sock: socket.socket, trickle: bytes = b"") -> bytes:
    """What the server sends until it closes the connection, sending `trickle` a byte at a
    time meanwhile (a bounded wait: past WAIT_S the test fails on the socket timeout)."""
    received = b""
    sock.settimeout(0.2 if trickle else WAIT_S)
    deadline = time.monotonic() + WAIT_S
    for byte in [trickle[i:i + 1] for i in range(len(trickle))] or [b""]:
        try:
            if byte:
                sock.sendall(byte)
            chunk = sock.recv(4096)
            if not chunk:
                return received
            received += chunk
        except TimeoutError:
            pass
        except (BrokenPipeError, ConnectionResetError):
            return received
        assert time.monotonic() < deadline, "the slow client was never cut off"
    sock.settimeout(WAIT_S)
    while chunk := sock.recv(4096):
        received += chunk
    return received


def test_a_client_sending_headers_a_byte_at_a_time_is_cut_off(guarded, tokens):
    with connect(guarded.url) as sock:
        endless = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Pad: a\r\n" * 10_000
        answer = until_closed(sock, endless)
    assert answer == b"" or answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert served(guarded, tokens["normal"])


def test_a_client_that_connects_and_says_nothing_is_cut_off(guarded, tokens):
    with connect(guarded.url) as sock:
        assert until_closed(sock).startswith(b"HTTP/1.1 408")
    assert served(guarded, tokens["normal"])


def test_a_request_whose_body_stops_short_gets_408(guarded, tokens):
    port = guarded.url.rsplit(":", 1)[1].split("/")[0]
    with connect(guarded.url) as sock:
        sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                     f"Authorization: Bearer {tokens['normal']}\r\n"
                     "Content-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\n"
                     "Content-Length: 500\r\n\r\n{\"jsonrpc\":".encode())
        answer = until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"request body not received within 1 s" in answer
    assert served(guarded, tokens["normal"])


def test_connections_past_the_cap_get_503_and_the_server_serves_once_they_close(guarded,
                                                                                tokens):
    status_url = guarded.url.replace("/mcp", "/ai-memory/status")
    statuses = []
    for _ in range(10):  # the idle three are cut after the 1 s header limit: a few tries
        idle = [connect(guarded.url) for _ in range(3)]
        try:
            statuses.append(httpx2.get(status_url, timeout=WAIT_S).status_code)
        finally:
            for sock in idle:
                sock.close()
        if statuses[-1] == 503:
            break
    assert 503 in statuses, statuses
    assert served(guarded, tokens["normal"])
    no_traceback(guarded.log)


def test_a_token_flooding_requests_gets_429_while_another_is_served(guarded, tokens):
    answers: list[httpx2.Response] = []
    with httpx2.Client(headers=bearer(tokens["flood"]), timeout=WAIT_S) as flood:
        while len(answers) < 400 and (not answers or answers[-1].status_code != 429):
            answers.append(flood.post(guarded.url, content=PING % (3, b"")))  # 60, then 1/s
    refused = answers[-1]
    assert refused.status_code == 429 and len(answers) > 60, [a.status_code for a in answers]
    assert int(refused.headers["retry-after"]) >= 1
    assert "60 requests a minute" in refused.json()["error"]["message"]
    assert served(guarded, tokens["normal"])


def test_one_token_cannot_hold_more_than_its_sessions(guarded, tokens):
    headers = bearer(tokens["sessions"])
    first, _second = open_session(guarded.url, headers), open_session(guarded.url, headers)
    refused = post(guarded.url, json.dumps(INITIALIZE).encode(), headers)
    assert refused.status_code == 429 and refused.headers["retry-after"], refused.text
    assert "2 open sessions" in refused.json()["error"]["message"]
    assert served(guarded, tokens["normal"])  # other tokens are not held to its count
    httpx2.delete(guarded.url, headers={**headers, "mcp-session-id": first}, timeout=WAIT_S)
    assert open_session(guarded.url, headers)  # a session ended makes room again


# -- stdio ----------------------------------------------------------------------------------

class StdioServer:
    """`ai-memory serve` spoken to in raw lines (bytes, so invalid UTF-8 can be sent)."""

    def __init__(self, root: Path, errlog: Path):
        self.errlog = errlog
        self._err = errlog.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memory", "serve", "--no-watch", "--root", str(root)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, env=server_env())
        self._inbox: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._inbox.put(line)

    def send(self, line: bytes) -> None:
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def reply(self) -> dict:
        line = self._inbox.get(timeout=WAIT_S)
        return json.loads(line)  # every stdout line is a JSON-RPC message, or this fails

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._err.close()


@pytest.fixture(scope="module")
def stdio(root, tmp_path_factory):
    server = StdioServer(root, tmp_path_factory.mktemp("logs") / "stdio.stderr")
    server.send(json.dumps(INITIALIZE).encode())
    assert "result" in server.reply()
    server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    yield server
    server.close()


@pytest.mark.parametrize("name", MALFORMED)
def test_each_malformed_line_gets_a_json_rpc_error_over_stdio_and_no_traceback(stdio, name):
    stdio.send(MALFORMED[name])
    error = stdio.reply()
    assert error["error"]["code"] in (-32700, -32600), error
    stdio.send(PING % (99, b""))
    assert stdio.reply() == {"jsonrpc": "2.0", "id": 99, "result": {}}
    assert stdio.proc.poll() is None
    no_traceback(stdio.errlog.read_text(encoding="utf-8", errors="replace"))


def test_a_line_over_the_size_bound_is_answered_and_the_next_one_served(stdio):
    stdio.send(b'{"jsonrpc":"2.0","id":60,"method":"ping","params":{"s":"'
               + b"x" * (3 * 1024 * 1024) + b'"}}')
    error = stdio.reply()
    assert (error["id"], error["error"]["code"]) == (60, -32600), error
    stdio.send(json.dumps(WRONG_ARGUMENT).encode())
    result = stdio.reply()["result"]
    assert result["isError"] and "invalid arguments for memory_search" in \
        result["content"][0]["text"]
    no_traceback(stdio.errlog.read_text(encoding="utf-8", errors="replace"))

"""One HTTP server per memory root for every local client: started on demand, found by record.

`<state_dir>/daemon.json` names the running daemon (pid, port). It is written by the daemon
once it listens and removed when it exits; a record whose pid is gone, or whose port is not
answered by a server that proves it holds the owner's local credential (local_credential),
is stale. Starting and stopping hold
`<state_dir>/locks/daemon.lock` (an OS lock: the kernel drops it if its holder dies), so
two clients starting at once end up with one daemon. Stdlib and filelock only: the stdio
bridge imports this.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass
from enum import Enum
from pathlib import Path

from filelock import FileLock, Timeout

from memory import __version__
from memory.domain.errors import Unavailable
from memory.entrypoints.http.config import MCP_PATH, STATUS_PATH
from memory.entrypoints.local_credential import read_secret, server_holds
from memory.entrypoints.settings import AUTO_SCOPE_ENV, REPOSITORY_ENV

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0
PROBE_TIMEOUT_S = 2.0
# Per-client settings: a shared daemon must not adopt those of whichever client started it;
# each bridge sends its own with every request.
CLIENT_ENV = (REPOSITORY_ENV, AUTO_SCOPE_ENV)


class DaemonState(Enum):
    RUNNING = "running"
    STALE = "stale"  # a record whose process is gone or does not answer
    STOPPED = "stopped"


@dataclass(frozen=True, kw_only=True)
class DaemonRecord:
    pid: int
    port: int
    root_id: str
    version: str
    started: float

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{MCP_PATH}"


@dataclass(frozen=True, kw_only=True)
class DaemonStatus:
    state: DaemonState
    record: DaemonRecord | None = None


def root_fingerprint(root: Path) -> str:
    """A short fingerprint of a memory root: a daemon's status names it, not the path."""
    return hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:16]


class LocalDaemon:
    """The daemon of one memory root: its record, its liveness, starting and stopping it."""

    def __init__(self, root: Path, state_dir: Path):
        self.root = root
        self.state_dir = state_dir
        self.record_path = state_dir / "daemon.json"
        self.log_path = state_dir / "logs" / "daemon.log"
        self._lock_path = state_dir / "locks" / "daemon.lock"
        self._root_id = root_fingerprint(root)

    def status(self) -> DaemonStatus:
        record = self.read_record()
        if record is None:
            return DaemonStatus(state=DaemonState.STOPPED)
        alive = _pid_alive(record.pid) and self._answers(record)
        return DaemonStatus(state=DaemonState.RUNNING if alive else DaemonState.STALE,
                            record=record)

    def ensure_running(self, timeout_s: float = START_TIMEOUT_S) -> DaemonRecord:
        """The running daemon's record, starting one first if none answers."""
        current = self.status()
        if current.state is DaemonState.RUNNING:
            return current.record
        with self._locked(timeout_s):
            current = self.status()  # another client may have started it while we waited
            if current.state is DaemonState.RUNNING:
                return current.record
            self._forget(current.record)
            return self._start(timeout_s)

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> DaemonStatus:
        """Stop the daemon (SIGTERM, then SIGKILL); what was found before stopping it."""
        with self._locked(timeout_s):
            found = self.status()
            if found.state is DaemonState.RUNNING:
                _terminate(found.record.pid, timeout_s)
            self._forget(found.record)
            return found

    # -- written by the daemon itself ----------------------------------------------------

    def write_record(self, port: int) -> DaemonRecord:
        record = DaemonRecord(pid=os.getpid(), port=port, root_id=self._root_id,
                              version=__version__, started=time.time())
        self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        temp = self.record_path.with_name(f".daemon.{os.getpid()}.tmp")
        temp.unlink(missing_ok=True)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(asdict(record)))
        os.replace(temp, self.record_path)
        return record

    def clear_record(self) -> None:
        """Remove the record if it is still this process's."""
        record = self.read_record()
        if record is not None and record.pid == os.getpid():
            self.record_path.unlink(missing_ok=True)

    def read_record(self) -> DaemonRecord | None:
        try:
            data = json.loads(self.record_path.read_text(encoding="utf-8"))
            return DaemonRecord(pid=int(data["pid"]), port=int(data["port"]),
                                root_id=str(data["root_id"]), version=str(data["version"]),
                                started=float(data["started"]))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            return None  # torn or foreign: as good as no record; the next start rewrites it

    # -- inside ----------------------------------------------------------------------------

    def credential(self) -> str | None:
        """The owner's local secret the daemon requires (None until a daemon made it)."""
        return read_secret(self.state_dir)

    def _answers(self, record: DaemonRecord) -> bool:
        """True when what answers on the recorded port proves it holds the owner's secret."""
        secret = self.credential()
        if secret is None:
            return False
        conn = http.client.HTTPConnection("127.0.0.1", record.port, timeout=PROBE_TIMEOUT_S)
        with closing(conn):
            return server_holds(conn, secret)

    def _start(self, timeout_s: float) -> DaemonRecord:
        self.log_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        env = {k: v for k, v in os.environ.items() if k not in CLIENT_ENV}
        command = [sys.executable, "-m", "memory", "serve", "--root", str(self.root),
                   "--state-dir", str(self.state_dir), "--http", "127.0.0.1:0", "--auth", "local",
                   "--daemon-record"]
        with os.fdopen(os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600),
                       "ab") as log:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=log, env=env,
                                       cwd=str(self.state_dir), **_detached())
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            record = self.read_record()
            if record is not None and record.pid == process.pid and self._answers(record):
                return record
            if process.poll() is not None:
                raise Unavailable(f"the ai-memory daemon exited at start (code "
                                  f"{process.returncode}); its log is {self.log_path}:\n"
                                  f"{_tail(self.log_path)}")
            time.sleep(0.1)
        _terminate(process.pid, STOP_TIMEOUT_S)
        raise Unavailable(f"the ai-memory daemon did not answer within {timeout_s:g}s; "
                          f"its log is {self.log_path}")

    def _forget(self, record: DaemonRecord | None) -> None:
        if record is None:
            return
        if _pid_alive(record.pid) and self._open_to_everyone(record):
            _terminate(record.pid, STOP_TIMEOUT_S)  # else it would go on letting everyone in
        self.record_path.unlink(missing_ok=True)

    def _open_to_everyone(self, record: DaemonRecord) -> bool:
        """True when the recorded daemon tells anyone who it is: one of an older version,
        which takes no credential."""
        conn = http.client.HTTPConnection("127.0.0.1", record.port, timeout=PROBE_TIMEOUT_S)
        with closing(conn):
            try:
                conn.request("GET", STATUS_PATH)
                status = json.loads(conn.getresponse().read(4096))
            except (OSError, http.client.HTTPException, ValueError):
                return False
        return (isinstance(status, dict) and status.get("pid") == record.pid
                and status.get("root_id") == self._root_id)

    @contextmanager
    def _locked(self, timeout_s: float) -> Iterator[None]:
        self._lock_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock = FileLock(str(self._lock_path), timeout=timeout_s)
        try:
            lock.acquire()
        except Timeout as exc:
            raise Unavailable(f"{self._lock_path} stayed locked for {timeout_s:g}s: another "
                              "client is starting or stopping the daemon") from exc
        try:
            yield
        finally:
            lock.release()


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if sys.platform == "win32":
        return True  # no cheap check there; the port probe decides
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive, but the probe will say it is not ours
    return True


def _terminate(pid: int, timeout_s: float) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _pid_alive(pid) or _reaped(pid):
            return
        time.sleep(0.05)
    try:
        os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
    except OSError:
        pass


def _reaped(pid: int) -> bool:
    """Reap `pid` if it is our exited child (one we spawned); True when it has exited."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except (ChildProcessError, OSError, AttributeError):
        return False
    return done == pid


def _detached() -> dict:
    """Popen options that let the daemon outlive the client that started it."""
    if sys.platform == "win32":
        flags = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP
        return {"creationflags": flags}
    return {"start_new_session": True}


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def run_daemon(action: str, daemon: LocalDaemon) -> int:
    """`ai-memory daemon start|stop|status`; the exit code says whether one runs (0) or not (3)."""
    if action == "start":
        record = daemon.ensure_running()
        print(f"running: pid {record.pid}, {record.url}")
        return 0
    if action == "stop":
        found = daemon.stop()
        print({DaemonState.RUNNING: f"stopped pid {found.record.pid if found.record else '?'}",
               DaemonState.STALE: "not running (a stale record was removed)",
               DaemonState.STOPPED: "not running"}[found.state])
        return 0
    status = daemon.status()
    if status.state is DaemonState.RUNNING:
        print(f"running: pid {status.record.pid}, {status.record.url}, log {daemon.log_path}")
        return 0
    print("not running" + (f" (stale record of pid {status.record.pid})" if status.record else ""))
    return 3

"""Nothing leaves the machine: setup, refresh, search and an MCP session under strace, fresh HOME.

Every process ai-memory starts (the CLI, `serve`, the graph worker, the ONNX export when the
model cache is cold, git) is traced with `strace -f`; the test fails on any connect or send
to an address outside loopback, on any DNS query, and on any file written under HOME other
than the client configurations and skill copies that setup exists to write.
"""

from __future__ import annotations

import codecs
import ipaddress
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from textwrap import dedent

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memory.entrypoints.clients import CLIENT_NAMES, TARGETS, Interpreter
from memory.entrypoints.clients.launcher import installed_script
from memory.entrypoints.clients.config_files import BACKUP_INFIX
from memory.entrypoints.clients.host import Host

# writev and the process calls are traced too: writev carries nscd's requests, execve and
# clone name the process behind an offence.
SYSCALLS = "connect,sendto,sendmsg,sendmmsg,writev,execve,clone,clone3,fork,vfork"
HOW_TO_GET_STRACE = ("install strace (Debian/Ubuntu: apt-get install strace; "
                     "./scripts/bootstrap.sh does it when run as root)")
HOW_TO_ALLOW_PTRACE = ("let this process ptrace its children: in a container run it with "
                       "--cap-add=SYS_PTRACE (or a seccomp profile that allows ptrace), on a host "
                       "check /proc/sys/kernel/yama/ptrace_scope")
# What a user may have exported for another project: the product must win over every one.
INHERITED_OPT_INS = {"ORT_DISABLE_TELEMETRY": "0", "HF_HUB_OFFLINE": "0",
                     "TRANSFORMERS_OFFLINE": "0", "HF_HUB_DISABLE_TELEMETRY": "0",
                     "DO_NOT_TRACK": "0", "OTEL_SDK_DISABLED": "false"}
# A fresh user's environment: nothing else of ours leaks in (no XDG_*, HF_HOME, CODEX_HOME,
# AI_MEMORY_ROOT...), so every default path is the one a new user gets, under HOME.
KEPT_VARIABLES = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "USER", "LOGNAME", "SHELL",
                  "TZ", "TMPDIR")

NOTES = {
    "Repos/payments-api/Notes/Webhook Retries.md": """\
        ---
        memory_id: pay-webhook-retries
        title: Webhook retries
        ---
        # Webhook retries

        The payment webhook is retried three times with exponential backoff.
        """,
    "Decisions/Logging.md": """\
        # Logging

        All services log JSON lines to stdout, one event per line.
        """,
}


# ---------------------------------------------------------------- reading strace's log

@dataclass(frozen=True)
class Call:
    tid: int
    name: str
    text: str  # the whole call, an interrupted one joined with its resumption

    @property
    def result(self) -> int | None:
        found = re.findall(r"\)\s+=\s+(-?\d+)", self.text)  # the last: a payload may hold one
        return int(found[-1]) if found else None

    @property
    def fd(self) -> int | None:
        match = re.match(r"\w+\((\d+),", self.text)
        return int(match.group(1)) if match else None

    def payload(self) -> bytes:
        """The bytes sent (sendto's buffer, or every iov_base of sendmsg/sendmmsg/writev)."""
        strings = (re.findall(r'iov_base="((?:[^"\\]|\\.)*)"', self.text) if "iov_base" in self.text
                   else re.findall(r'^\w+\(\d+, "((?:[^"\\]|\\.)*)"', self.text)[:1])
        return b"".join(codecs.escape_decode(s.encode("latin-1"))[0] for s in strings)


def calls(log: Path) -> Iterator[Call]:
    pending: dict[int, str] = {}
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        tid, _, text = line.partition(" ")
        if not tid.isdigit():
            continue
        text = text.strip()
        if text.endswith("<unfinished ...>"):
            pending[int(tid)] = text.removesuffix("<unfinished ...>")
            continue
        resumed = re.match(r"<\.\.\. (\w+) resumed>(.*)", text)
        if resumed:
            text = pending.pop(int(tid), resumed.group(1) + "(") + resumed.group(2)
        yield Call(int(tid), text.split("(", 1)[0], text)


INET = re.compile(r'sa_family=AF_INET, sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)')
INET6 = re.compile(r'sa_family=AF_INET6, sin6_port=htons\((\d+)\).*?inet_pton\(AF_INET6, "([^"]+)"')
UNIX = re.compile(r'sa_family=AF_UNIX, sun_path=@?"([^"]*)"')
# Other AF_UNIX traffic stays on the machine (asyncio's socketpair wake-ups in `serve`, the
# uuidd socket onnx's uuid1() tries while quantizing); these daemons resolve names, though.
# A connect to one that fails asked nothing: glibc falls through to the next NSS source,
# whose DNS traffic is caught on its own.
NSCD = "/run/nscd/socket"
NAME_SERVICES = {NSCD: "nscd", "/run/systemd/resolve/io.systemd.Resolve": "systemd-resolved",
                 "/run/avahi-daemon/socket": "avahi (mDNS)"}
# nscd also serves the user database, and torch's getpass.getuser() asks it for our passwd
# entry at import (measured): request types 0-3 (passwd/group by name or id), 11-12 (their
# shared maps) and 15 (initgroups) are no lookup of a name elsewhere; hosts are.
NSCD_USER_DATABASE = {0, 1, 2, 3, 11, 12, 15}


def destinations(text: str) -> list[tuple[str, str, int]]:
    found = [("inet", a, int(p)) for p, a in INET.findall(text)]
    found += [("inet", a, int(p)) for p, a in INET6.findall(text)]
    found += [("unix", path.replace("/var/run/", "/run/", 1), 0) for path in UNIX.findall(text)]
    return found


def is_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def dns_question(packet: bytes) -> str:
    labels, at = [], 12
    while at < len(packet) and packet[at]:
        labels.append(packet[at + 1:at + 1 + packet[at]].decode("ascii", "replace"))
        at += 1 + packet[at]
    return ".".join(labels) or "?"


@dataclass
class Trace:
    """One strace log: what its processes ran, and every attempt to reach beyond loopback."""

    log: Path
    programs: dict[int, str] = field(default_factory=dict)
    parents: dict[int, int] = field(default_factory=dict)
    offences: list[tuple[int, str]] = field(default_factory=list)
    # (tid, fd) of a DNS server or nscd connected to, until the request shows what was asked
    connected: dict[tuple[int, int | None], tuple[str, str, int]] = field(default_factory=dict)

    @classmethod
    def read(cls, log: Path) -> Trace:
        trace = cls(log)
        for call in calls(log):
            trace._note(call)
        for (tid, _), (kind, where, _) in trace.connected.items():
            trace.offences.append((tid, f"DNS server {where}:53 contacted" if kind == "inet"
                                   else "connected to nscd, request unseen"))
        return trace

    def _note(self, call: Call) -> None:
        if call.name == "execve" and call.result == 0:
            argv = re.findall(r'"((?:[^"\\]|\\.)*)"', call.text.split("], ", 1)[0])[1:]
            self.programs[call.tid] = " ".join(argv)
        elif call.name in ("clone", "clone3", "fork", "vfork") and (call.result or 0) > 0:
            self.parents[call.result] = call.tid
        elif call.name == "connect":
            for kind, where, port in destinations(call.text):
                self._connect(call, kind, where, port)
        elif call.name in ("sendto", "sendmsg", "sendmmsg", "writev"):
            named = destinations(call.text)[:1]
            for kind, where, port in named or [self.connected.pop((call.tid, call.fd),
                                                                  ("", "", 0))]:
                self._send(call, kind, where, port)

    def _connect(self, call: Call, kind: str, where: str, port: int) -> None:
        if call.result == 0 and (port == 53 or where == NSCD):
            self.connected[(call.tid, call.fd)] = (kind, where, port)  # the request tells
        elif kind == "inet" and (port == 53 or not is_loopback(where)):
            self.offences.append((call.tid, f"connect to {where}:{port}"))
        elif call.result == 0 and where in NAME_SERVICES:
            self.offences.append((call.tid, f"asked {NAME_SERVICES[where]} to resolve a name"))

    def _send(self, call: Call, kind: str, where: str, port: int) -> None:
        if kind == "inet" and port == 53:
            self.offences.append((call.tid, f"DNS query for {dns_question(call.payload())} "
                                            f"to {where}:53"))
        elif kind == "inet" and not is_loopback(where):
            self.offences.append((call.tid, f"{call.name} to {where}:{port}"))
        elif where == NSCD:
            request = call.payload()  # version, type, key length (int32 each), key
            asked = int.from_bytes(request[4:8], "little") if len(request) >= 8 else -1
            if asked not in NSCD_USER_DATABASE:
                key = request[12:].split(b"\0")[0].decode("utf-8", "replace")
                self.offences.append((call.tid, f"asked nscd for {key!r} (request {asked})"))

    def program(self, tid: int) -> str:
        seen = set()
        while tid not in self.programs and tid in self.parents and tid not in seen:
            seen.add(tid)
            tid = self.parents[tid]
        return self.programs.get(tid, "?")

    def report(self) -> list[str]:
        """One line per offence and program, with how often it happened."""
        counted = Counter((self.program(tid), what) for tid, what in self.offences)
        return [f"{self.log.name}: {n}x {what}  [{program[:110]}]"
                for (program, what), n in sorted(counted.items())]


# ---------------------------------------------------------------- running under strace

@dataclass(frozen=True)
class Tracer:
    strace: str
    options: tuple[str, ...]

    def wrap(self, log: Path, argv: list[str]) -> list[str]:
        return [self.strace, *self.options, "-o", str(log), "--", *argv]

    def run(self, log: Path, argv: list[str], env: dict, cwd: Path,
            timeout: float = 900) -> subprocess.CompletedProcess:
        done = subprocess.run(self.wrap(log, argv), env=env, cwd=cwd, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"{' '.join(argv)} failed:\n{done.stderr[-3000:]}"
        return done


@pytest.fixture(scope="module")
def tracer(tmp_path_factory) -> Tracer:
    """strace, checked to trace here; never a skip: a missing tracer is a broken test box."""
    strace = shutil.which("strace")
    if strace is None:
        pytest.fail(f"strace is not installed: {HOW_TO_GET_STRACE}", pytrace=False)
    log = tmp_path_factory.mktemp("probe") / "true.st"
    base = ("-f", "-qq", "-e", "signal=none", "-e", f"trace={SYSCALLS}", "-s", "512")
    # seccomp-bpf stops the tracee only at the traced calls: torch-heavy children run at
    # near full speed. Older strace lacks it; plain ptrace then.
    for options in (("--seccomp-bpf", *base), base):
        done = subprocess.run([strace, *options, "-o", str(log), "--", sys.executable, "-c",
                               "import subprocess; subprocess.run(['true'])"],
                              capture_output=True, text=True, timeout=60)
        if done.returncode == 0 and log.is_file() and "execve" in log.read_text():
            return Tracer(strace, options)
    pytest.fail(f"strace cannot trace here ({done.stderr.strip()[-300:]}): {HOW_TO_ALLOW_PTRACE}",
                pytrace=False)


@dataclass(frozen=True)
class Sandbox:
    home: Path
    root: Path
    traces: Path
    workspace: Path  # where every command starts: a clone, so git is asked for its origin
    env: dict

    def note(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text), encoding="utf-8")


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Sandbox:
    base = tmp_path_factory.mktemp("no-egress")
    home, root, traces = base / "home", base / "memory", base / "traces"
    workspace = base / "src" / "payments-api"
    for folder in (home, root, traces, workspace / ".git" / "objects", workspace / ".git" / "refs"):
        folder.mkdir(parents=True)
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (workspace / ".git" / "config").write_text(
        '[remote "origin"]\n\turl = https://github.com/example/payments-api.git\n')
    env = {k: os.environ[k] for k in KEPT_VARIABLES if k in os.environ}
    # The model cache the other integration tests share (test_index_pipeline): outside HOME,
    # so HOME holds only what setup writes; the first run in a session exports the model
    # under this trace, later ones reuse it.
    cache = tmp_path_factory.getbasetemp() / "shared-model-cache"
    cache.mkdir(exist_ok=True)
    env.update(INHERITED_OPT_INS, HOME=str(home), AI_MEMORY_MODEL_CACHE=str(cache))
    box = Sandbox(home=home, root=root, traces=traces, workspace=workspace, env=env)
    for rel, text in NOTES.items():
        box.note(rel, text)
    return box


def installed_command() -> str:
    """The `ai-memory` script of this environment, as setup registers it."""
    return installed_script(Interpreter.running(os.environ, sys.platform))


async def mcp_session(tracer: Tracer, box: Sandbox, log: Path) -> dict:
    argv = tracer.wrap(log, [installed_command(), "serve", "--root", str(box.root)])
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=box.env, cwd=box.workspace)
    results = {}
    with (box.traces / "serve.stderr").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(600):
                    await session.initialize()
                    box.note("Decisions/Releases.md", "# Releases\n\nWe ship on Tuesdays.\n")
                    for name, arguments in (
                            ("memory_search", {"query": "webhook retry backoff"}),
                            ("memory_get", {"identity": "pay-webhook-retries"}),
                            ("memory_refresh", {"mode": "full"}),
                            ("memory_search", {"query": "when do we ship releases"}),
                            ("memory_health", {})):
                        results[name] = await session.call_tool(name, arguments)
    return results


@pytest.fixture(scope="module")
def session(tracer, sandbox) -> dict:
    """setup with every client, a full refresh, a CLI search, an MCP session; one log each."""
    box, cli, cwd = sandbox, installed_command(), sandbox.workspace
    tracer.run(box.traces / "setup.st", [cli, "setup", "--memory-root", str(box.root),
                                         "--install-clients", "--clients", ",".join(CLIENT_NAMES)],
               box.env, cwd)
    box.note("Decisions/Deploys.md", "# Deploys\n\nDeploys need two approvals.\n")
    tracer.run(box.traces / "refresh.st",
               [cli, "refresh", "--mode", "full", "--root", str(box.root)], box.env, cwd)
    search = tracer.run(box.traces / "search.st",
                        [cli, "search", "how many approvals for a deploy", "--root", str(box.root)],
                        box.env, cwd)
    results = anyio.run(mcp_session, tracer, box, box.traces / "mcp.st")
    return {"search": search.stdout, "mcp": results}


# ---------------------------------------------------------------- the tests

def test_the_tracer_catches_a_lookup_and_a_remote_connect(tracer, tmp_path):
    """The checks below can fail: a lookup and a connect to TEST-NET-1 are both reported."""
    log = tmp_path / "reach.st"
    reach = ("import socket\n"
             "try: socket.getaddrinfo('egress-probe.invalid', 443)\n"
             "except OSError: pass\n"
             "s = socket.socket(); s.setblocking(False)\n"
             "try: s.connect(('192.0.2.1', 9))\n"
             "except OSError: pass\n")
    subprocess.run(tracer.wrap(log, [sys.executable, "-c", reach]), timeout=60, check=True)
    found = "\n".join(Trace.read(log).report())
    assert "DNS query for egress-probe.invalid" in found, found
    assert "connect to 192.0.2.1:9" in found, found


SYNTHETIC_LOG = r"""
10 connect(3, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT (No such file or directory)
11 connect(4, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = 0
11 sendto(4, "\2\0\0\0\1\0\0\0\2\0\0\0000\0", 14, MSG_NOSIGNAL, NULL, 0) = 14
12 connect(5, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = 0
12 sendto(5, "\2\0\0\0\16\0\0\0\f\0\0\0example.com\0", 24, MSG_NOSIGNAL, NULL, 0) = 24
13 connect(6, {sa_family=AF_UNIX, sun_path="/run/systemd/resolve/io.systemd.Resolve"}, 110) = 0
14 connect(7, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::ffff:127.0.0.1", &sin6_addr), sin6_scope_id=0}, 28) = 0
15 connect(8, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "2001:db8::1", &sin6_addr), sin6_scope_id=0}, 28 <unfinished ...>
16 sendto(9, "\0", 1, 0, NULL, 0) = 1
15 <... connect resumed>) = -1 ENETUNREACH (Network is unreachable)
17 connect(9, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("127.0.0.53")}, 16) = 0
17 sendmmsg(9, [{msg_hdr={msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base="\1\2\1\0\0\1\0\0\0\0\0\0\4pypi\3org\0\0\1\0\1", iov_len=26}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, msg_len=26}], 1, MSG_NOSIGNAL) = 1
"""


def test_the_log_reader_tells_a_user_lookup_from_a_name_lookup(tmp_path):
    """The rules the real runs rarely meet (a running nscd, IPv6), on lines as strace writes
    them: a passwd read through nscd, a refused connect and loopback pass; the rest fail."""
    log = tmp_path / "synthetic.st"
    log.write_text(SYNTHETIC_LOG.lstrip())
    found = sorted(what for _, what in Trace.read(log).offences)
    assert found == ["DNS query for pypi.org to 127.0.0.53:53",
                     "asked nscd for 'example.com' (request 14)",
                     "asked systemd-resolved to resolve a name",
                     "connect to 2001:db8::1:443"]


def test_every_step_ran_and_its_children_were_traced(sandbox, session):
    assert "approvals" in session["search"]
    for name, result in session["mcp"].items():
        assert not result.is_error, (name, result.content)
    assert "Tuesdays" in session["mcp"]["memory_search"].content[0].text
    programs = {name: " | ".join(Trace.read(sandbox.traces / f"{name}.st").programs.values())
                for name in ("setup", "refresh", "search", "mcp")}
    for name in ("setup", "refresh", "mcp"):  # a full refresh runs Graphify in a child
        assert "memory.adapters.graphify.worker" in programs[name], programs[name]
    assert " serve --root " in programs["mcp"]


def test_no_process_reaches_beyond_loopback(sandbox, session):
    offences = [line for log in sorted(sandbox.traces.glob("*.st"))
                for line in Trace.read(log).report()]
    if offences:
        pytest.fail("reached beyond the machine:\n" + "\n".join(offences), pytrace=False)


def test_nothing_is_written_under_home_but_client_files(sandbox, session):
    host = Host(home=sandbox.home, platform=sys.platform, env=sandbox.env)
    configs = [t.config_path(host) for t in TARGETS.values()]
    skills = [t.skill_path(host) for t in TARGETS.values() if t.skill_path is not None]
    allowed = configs + skills

    def expected(path: Path) -> bool:
        return (any(path == a or a.is_relative_to(path) for a in allowed)
                or any(path.is_relative_to(s) for s in skills)
                or any(path.parent == c.parent and path.name.startswith(c.name + BACKUP_INFIX)
                       for c in configs))

    written = sorted(str(p.relative_to(sandbox.home)) for p in sandbox.home.rglob("*")
                     if not expected(p))
    if written:
        pytest.fail("written under HOME:\n" + "\n".join(written), pytrace=False)
    assert all(c.is_file() for c in configs), "setup registered fewer clients than asked"

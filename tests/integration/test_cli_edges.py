"""The command line as a person or a script meets it: results on stdout, warnings and progress
on stderr in the CLI's own words, errors under --json as a JSON object with a non-zero exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def cli(*args: str, root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memory", *args, "--root", str(root)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, **OFFLINE})


@pytest.fixture
def root(tmp_path: Path) -> Path:
    note = tmp_path / "Decisions" / "Logging.md"
    note.parent.mkdir(parents=True)
    note.write_text("# Logging\n\nAll services log JSON lines to stdout.\n", encoding="utf-8")
    return tmp_path


def test_warnings_go_to_stderr_and_name_the_cli_command(root):
    done = cli("health", root=root)  # no index yet: unhealthy, with a warning
    assert done.returncode == 1
    assert "warning: not indexed: no index yet; run ai-memory refresh" in done.stderr
    assert "warning:" not in done.stdout and "memory_refresh" not in done.stdout + done.stderr
    assert done.stdout.startswith("UNHEALTHY: ")
    as_json = cli("health", "--json", root=root)
    assert json.loads(as_json.stdout)["warnings"] == [
        "not indexed: no index yet; run ai-memory refresh to build it (nothing can be found)"]


@pytest.mark.parametrize("args,kind,code", [
    (("get", "no-such-note"), "unavailable", 1),  # never indexed: no answer about any name
    (("search", "retry", "--limit", "0"), "invalid request", 2),
    (("get", "../outside.md"), "invalid request", 2),
    (("search", "retry", "--bogus-flag"), "usage", 2),
    (("refresh", "--mode", "sideways"), "usage", 2),
])
def test_an_error_under_json_is_a_json_object_and_a_non_zero_exit(root, args, kind, code):
    done = cli(*args, "--json", root=root)
    assert done.returncode == code, done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["kind"] == kind and error["exit_code"] == code and error["message"]
    assert "Traceback" not in done.stderr
    plain = cli(*args, root=root)
    assert plain.returncode == code and plain.stdout == ""
    assert plain.stderr.strip() and not plain.stderr.lstrip().startswith("{")


def test_serve_help_offers_no_json_flag(root):
    done = subprocess.run([sys.executable, "-m", "memory", "serve", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "--json" not in done.stdout and "--no-watch" in done.stdout


def test_a_full_refresh_says_what_the_graph_stage_is_doing(root):
    done = cli("refresh", "--mode", "full", root=root)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stderr.splitlines()
    assert "graph: 0/1, building the knowledge graph (Graphify)" in lines, done.stderr
    assert any(line.startswith("graph: 1/1, done in ") for line in lines), done.stderr
    assert done.stdout.startswith("refresh (full): ok")
    assert "graph:" not in done.stdout.split("\n")[0]
    assert "index: published -> " in done.stdout and "(+1 ~0 -0; " in done.stdout
    again = cli("refresh", "--mode", "full", root=root)  # a rebuild that changed no note
    assert again.returncode == 0 and "(+0 ~0 -0; " in again.stdout, again.stdout


def test_a_name_from_a_non_utf8_terminal_is_refused_with_its_spelling(root):
    done = subprocess.run([sys.executable, "-m", "memory", "get", b"caf\xe9.md", "--root",
                           str(root), "--json"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **OFFLINE, "LC_ALL": "C.UTF-8"})
    assert done.returncode == 2, done.stderr[-2000:]
    error = json.loads(done.stdout)["error"]
    assert error["kind"] == "invalid request" and "0xE9" in error["message"]
    assert "%E9" in error["message"] and "Traceback" not in done.stderr


def test_a_search_after_an_edit_with_no_server_running_answers_from_the_edit_or_says_stale(root):
    assert cli("refresh", root=root).returncode == 0
    note = root / "Decisions" / "Logging.md"
    note.write_text(note.read_text(encoding="utf-8")
                    + "\nRotate the logs with the zebrafish rotator nightly.\n", encoding="utf-8")
    done = cli("search", "zebrafish rotator", "--json", root=root)
    assert done.returncode == 0, done.stderr[-3000:]
    packet = json.loads(done.stdout)
    assert packet["freshness"] in ("refreshed-before-search", "stale"), packet
    if packet["freshness"] == "stale":
        assert any(w.startswith("stale index: ") for w in packet["warnings"]), packet
    else:
        assert packet["items"][0]["path"] == "Decisions/Logging.md"
        assert "zebrafish" in packet["items"][0]["text"]
        assert packet["items"][0]["end_line"] == 5  # the new line, not the old L1-L3


def test_a_root_never_indexed_says_not_indexed_on_search_get_and_health(root):
    search = cli("search", "JSON lines stdout", root=root)
    assert search.returncode == 0, search.stderr[-3000:]
    assert "freshness: not-indexed" in search.stdout
    assert "no answer: not indexed: " in search.stdout and "ai-memory refresh" in search.stdout
    assert "never mentions" not in search.stdout and "current" not in search.stdout
    get = cli("get", "Decisions/Logging.md", root=root)
    assert get.returncode == 0 and "All services log JSON lines" in get.stdout
    assert "warning: not indexed: " in get.stderr and "ai-memory refresh" in get.stderr
    health = cli("health", root=root)
    assert "problem: not indexed: " in health.stdout and "ai-memory refresh" in health.stdout
    again = json.loads(cli("search", "JSON lines stdout", "--json", root=root).stdout)
    assert again["freshness"] == "not-indexed"  # the reads built nothing behind our back


def test_get_by_name_and_eval_on_a_root_never_indexed_say_not_indexed_and_exit_1(root):
    get = cli("get", "Logging", root=root)
    assert get.returncode == 1 and get.stdout == ""
    assert get.stderr.startswith("unavailable: not indexed: ") and "ai-memory refresh" in get.stderr
    queries = root.parent / "queries.jsonl"
    queries.write_text(json.dumps({"qid": "q1", "question": "log format",
                                   "evidence": [{"path": "Decisions/Logging.md", "line": 3}]})
                       + "\n", encoding="utf-8")
    scored = cli("eval", str(queries), "--signals", "lexical", root=root)
    assert scored.returncode == 1 and "| all |" not in scored.stdout
    assert "not indexed: " in scored.stderr and f"ai-memory refresh --root {root}" in scored.stderr


def test_health_of_a_root_never_indexed_names_each_problem_once(root):
    done = cli("health", root=root)
    problems = [line.removeprefix("problem: ") for line in done.stdout.splitlines()
                if line.startswith("problem: ")]
    assert problems and any("graph" in p for p in problems)
    assert not [(a, b) for a in problems for b in problems if a != b and b.startswith(a)]
    assert "loads on first use" in done.stdout and "semantic search off" not in done.stdout


def test_a_scope_no_note_has_is_a_warning_naming_the_closest_names(root):
    note = root / "Repos" / "payments-api" / "Notes" / "Retries.md"
    note.parent.mkdir(parents=True)
    note.write_text("# Retries\n\nWebhooks retry three times.\n", encoding="utf-8")
    assert cli("refresh", root=root).returncode == 0
    done = cli("search", "webhook retries", "--repository", "payment-api", root=root)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "warning: scope matches no note: no note has repository 'payment-api' (closest: " \
           "payments-api)" in done.stderr
    as_json = json.loads(cli("search", "webhook retries", "--ticket", "PAY-1", "--json",
                             root=root).stdout)
    assert any("no note has ticket 'PAY-1'" in w for w in as_json["warnings"]), as_json
    known = cli("search", "webhook retries", "--repository", "payments-api", root=root)
    assert "scope matches no note" not in known.stderr

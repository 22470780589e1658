"""Run the reliability tests at stress scale and print their figures as a Markdown table.

    .venv/bin/python scripts/stress.py                     # everything, stress scale
    .venv/bin/python scripts/stress.py --only crash,many   # some guarantees
    .venv/bin/python scripts/stress.py --servers 8 --rounds 60 --crash-trials 300

The same tests run in CI at a small scale; here the scale comes from environment variables
they read (AI_MEMORY_SERVERS, AI_MEMORY_ROUNDS, AI_MEMORY_CRASH_TRIALS,
AI_MEMORY_HYPOTHESIS_EXAMPLES, AI_MEMORY_REAL_STACK_EXAMPLES), and hypothesis explores new
examples on every run instead of CI's fixed sample. Figures go to docs/reliability.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RELIABILITY = "tests/integration/reliability"
GUARANTEES = {  # name -> (title, test modules)
    "many": ("1. many processes", [f"{RELIABILITY}/test_many_processes.py"]),
    "crash": ("2. crash safety", [f"{RELIABILITY}/test_crash_safety.py"]),
    "corruption": ("3. corruption", [f"{RELIABILITY}/test_corruption.py",
                                     f"{RELIABILITY}/test_corruption_postgres.py",
                                     "tests/integration/adapters/test_sqlite_damage.py"]),
    "input": ("4. hostile tool input", ["tests/unit/entrypoints/test_hostile_tool_input.py",
                                        f"{RELIABILITY}/test_hostile_input_real_stack.py",
                                        "tests/integration/test_mcp_edges.py",
                                        "tests/integration/test_mcp_protocol.py",
                                        "tests/integration/test_cli_edges.py"]),
    "notes": ("5. hostile notes", ["tests/unit/domain/test_identity.py",
                                   "tests/unit/application/test_note_identity.py",
                                   f"{RELIABILITY}/test_hostile_notes.py",
                                   f"{RELIABILITY}/test_note_identity_real_stack.py"]),
    "scope": ("6. scope isolation", ["tests/unit/application/test_scope_isolation.py",
                                     f"{RELIABILITY}/test_scope_isolation_real_stack.py"]),
    "secrets": ("7. secrets", ["tests/unit/application/test_secret_redaction.py",
                               f"{RELIABILITY}/test_secrets_real_stack.py"]),
    "churn": ("12. disk under churn", ["tests/integration/adapters/test_sqlite_churn.py"]),
}
PRINTED = re.compile(r"^\[(?P<name>[a-z-]+)\] (?P<text>.+)$", re.M)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", default=",".join(GUARANTEES),
                   help=f"comma-separated subset of {', '.join(GUARANTEES)}")
    p.add_argument("--servers", type=int, default=8, help="serve processes (CI: 4)")
    p.add_argument("--rounds", type=int, default=40, help="edit/refresh rounds (CI: 10)")
    p.add_argument("--crash-trials", type=int, default=200, help="kills (CI: 30)")
    p.add_argument("--churn-refreshes", type=int, default=1000,
                   help="one-note refreshes in the disk bound test (CI: 150)")
    p.add_argument("--examples", type=int, default=1000,
                   help="hypothesis examples per in-memory property (CI: 50-150)")
    p.add_argument("--real-examples", type=int, default=30,
                   help="generated roots on the real stack (CI: 5)")
    p.add_argument("--seed", type=int, default=int(time.time()), help="kill points")
    p.add_argument("--json", help="also write the figures here")
    return p.parse_args(argv)


def environment(args) -> dict[str, str]:
    return {**os.environ, "AI_MEMORY_SERVERS": str(args.servers),
            "AI_MEMORY_ROUNDS": str(args.rounds),
            "AI_MEMORY_CRASH_TRIALS": str(args.crash_trials),
            "AI_MEMORY_CHURN_REFRESHES": str(args.churn_refreshes),
            "AI_MEMORY_SEED": str(args.seed),
            "AI_MEMORY_HYPOTHESIS_EXAMPLES": str(args.examples),
            "AI_MEMORY_REAL_STACK_EXAMPLES": str(args.real_examples),
            "HYPOTHESIS_PROFILE": "explore",
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false"}


def run(name: str, modules: list[str], env: dict[str, str]) -> dict:
    """One pytest run; its outcome counts, recorded figures and printed figure lines."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *modules, "-q", "-s", "-p", "no:cacheprovider",
             f"--junitxml={report}", "-o", "junit_logging=no"],
            cwd=REPO, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        suite = ET.parse(report).getroot().find("testsuite") if report.exists() else None
    figures: list = []
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if suite is not None:
        counts = {k: int(suite.get(k, 0)) for k in counts}
        for prop in suite.iter("property"):
            if prop.get("name") == "figures":
                figures.append(prop.get("value"))
    printed = [f"[{m['name']}] {m['text']}" for m in
               PRINTED.finditer(done.stdout + done.stderr)]
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAILED")]
    if done.returncode != 0:  # what failed, kept for whoever has to find out why
        log = Path(tempfile.gettempdir()) / f"ai-memory-stress-{name.split('.')[0]}.log"
        log.write_text(done.stdout + done.stderr, encoding="utf-8")
        failed.append(f"output: {log}")
    return {"guarantee": name, **counts, "seconds": round(seconds, 1), "figures": figures,
            "printed": printed, "failed": failed, "returncode": done.returncode}


def table(results: list[dict], args) -> str:
    rows = ["| guarantee | tests | failures | seconds | figures |", "|---|---|---|---|---|"]
    for r in results:
        shown = "; ".join(dict.fromkeys(r["printed"] or r["figures"])) or "-"
        rows.append(f"| {r['guarantee']} | {r['tests']} | {r['failures'] + r['errors']} "
                    f"| {r['seconds']} | {shown} |")
    scale = (f"servers={args.servers} rounds={args.rounds} crash-trials={args.crash_trials} "
             f"examples={args.examples} real-examples={args.real_examples} seed={args.seed}")
    return f"Stress run on {os.cpu_count()} CPUs ({scale}):\n\n" + "\n".join(rows)


def main(argv=None) -> int:
    args = parse_args(argv)
    env = environment(args)
    results = []
    for key in [k.strip() for k in args.only.split(",") if k.strip()]:
        title, modules = GUARANTEES[key]
        print(f"running {title} ...", file=sys.stderr, flush=True)
        result = run(title, modules, env)
        results.append(result)
        for line in result["failed"]:
            print(f"  {line}", file=sys.stderr)
    print(table(results, args))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0 if all(r["returncode"] == 0 for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())

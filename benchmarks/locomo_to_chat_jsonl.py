"""The LoCoMo notes of ../shared/eval (one note per chat session) as raw records of the plain
format (chat-jsonl), one file per conversation, ready for `ai-memory artifacts ingest`.

    python benchmarks/locomo_to_chat_jsonl.py MEMORY_ROOT OUT_DIR

MEMORY_ROOT is locomo-dev/memory (projects/locomo-<id>/sessions/session-<NN>.md). Each turn
line `- [D3:5] **Caroline**: text` becomes one record: conversation and project `locomo-<id>`,
session `session-<NN>`, speaker, text (photo captions as the note has them), and
seq = 1000 * session + turn, so that seq order is dia_id order and a seq names its dia_id
(D3:5 is seq 3005). The session's date is each turn's time; LoCoMo gives no time zone, so
it is written as UTC (+00:00).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

TURN = re.compile(r"^- \[D(?P<session>\d+):(?P<turn>\d+)\] \*\*(?P<speaker>[^*]+)\*\*: ?(?P<text>.*)$")
DATE = re.compile(r'^date:\s*"?(?P<date>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?)"?\s*$')


def seq_of(session: int, turn: int) -> int:
    return 1000 * session + turn


def records_of(note: Path, conversation: str) -> list[dict]:
    lines = note.read_text(encoding="utf-8").splitlines()
    dates = [m.group("date") for m in map(DATE.match, lines) if m]
    time = _utc(dates[0]) if dates else None
    records = []
    for line in lines:
        match = TURN.match(line)
        if match is None:
            continue
        record = {"conversation": conversation, "session": note.stem,
                  "seq": seq_of(int(match["session"]), int(match["turn"])), "time": time,
                  "speaker": match["speaker"].strip(), "project": conversation,
                  "text": match["text"]}
        records.append({k: v for k, v in record.items() if v is not None})
    return records


def _utc(date: str) -> str:
    return f"{date}:00+00:00" if date.count(":") == 1 else f"{date}+00:00"


def convert(root: Path, out: Path) -> dict[str, int]:
    """One OUT/<conversation>.jsonl per projects/<conversation>; turns in seq order."""
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for project in sorted(p for p in (root / "projects").iterdir() if p.is_dir()):
        records = [r for note in sorted((project / "sessions").glob("session-*.md"))
                   for r in records_of(note, project.name)]
        records.sort(key=lambda r: r["seq"])
        (out / f"{project.name}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        counts[project.name] = len(records)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="the LoCoMo memory root (locomo-dev/memory)")
    parser.add_argument("out", type=Path, help="folder for the chat-jsonl files")
    args = parser.parse_args()
    counts = convert(args.root, args.out)
    for name, count in counts.items():
        print(f"{name}: {count} records", file=sys.stderr)
    print(f"{sum(counts.values())} records in {len(counts)} files under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Refresh progress on the terminal: a bar per stage on a TTY, plain lines otherwise, on stderr.

A stage that waits without steps (the graph is built by Graphify in a child process, one
step for the whole build) shows what it is doing and for how long, so it never looks stuck.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from dataclasses import dataclass
from typing import TextIO

from memory.domain.refresh import Stage

DOING = {Stage.GRAPH: "building the knowledge graph (Graphify)", Stage.INDEX: "indexing notes"}
UNITS = {Stage.GRAPH: "build", Stage.INDEX: "note"}


@dataclass
class _Stage:
    started: float
    done: int
    total: int
    printed: int | None = None  # the `done` of the last plain line
    printed_at: float | None = None


class TerminalProgress:
    """A context manager whose value is the `progress(stage, done, total)` callback."""

    def __init__(self, stream: TextIO | None = None, *, tick_s: float = 0.5,
                 quiet_line_s: float = 10.0, clock=time.monotonic):
        self._stream = stream or sys.stderr
        self._tty = self._stream.isatty()
        self._tick_s, self._quiet_line_s, self._clock = tick_s, quiet_line_s, clock
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._bars: dict = {}
        self._stages: dict[Stage, _Stage] = {}

    def __enter__(self):
        threading.Thread(target=self._ticking, name="ai-memory-progress", daemon=True).start()
        return self.update

    def __exit__(self, *exc):
        self._stop.set()
        with self._lock:
            for bar in self._bars.values():
                bar.close()
        return False

    def update(self, stage: Stage, done: int, total: int) -> None:
        now = self._clock()
        with self._lock:
            state = self._stages.setdefault(stage, _Stage(started=now, done=done, total=total))
            state.done, state.total = done, total
            if self._tty:
                self._bar(stage, done, total)
                return
            step = max(1, total // 10)
            if state.printed is None:  # a stage starts: say what it does
                self._line(state, f"{stage}: {done}/{total}, {DOING.get(stage, stage)}", now)
            elif done >= total:
                self._line(state, f"{stage}: {done}/{total}, done in "
                                  f"{now - state.started:.1f} s", now)
            elif done - state.printed >= step:
                self._line(state, f"{stage}: {done}/{total}", now)

    def tick(self) -> None:
        """Say what each unfinished stage is doing and for how long (the thread calls this)."""
        now = self._clock()
        with self._lock:
            for stage, state in self._stages.items():
                if state.done >= state.total:
                    continue
                doing = f"{DOING.get(stage, stage)}, {now - state.started:.0f} s"
                if self._tty and stage in self._bars:
                    self._bars[stage].set_postfix_str(doing, refresh=True)
                elif not self._tty and now - (state.printed_at or now) >= self._quiet_line_s:
                    self._line(state, f"{stage}: {state.done}/{state.total}, {doing}", now)

    def _line(self, state: _Stage, text: str, now: float) -> None:
        state.printed, state.printed_at = state.done, now
        print(text, file=self._stream, flush=True)

    def _bar(self, stage: Stage, done: int, total: int) -> None:
        from tqdm import tqdm
        bar = self._bars.get(stage)
        if bar is None:
            bar = self._bars[stage] = tqdm(total=total, desc=stage, file=self._stream,
                                           unit=UNITS.get(stage, "step"))
        bar.total = total
        bar.update(done - bar.n)

    def _ticking(self) -> None:
        while not self._stop.wait(self._tick_s):
            self.tick()



NOTICES = "memory.adapters.embeddings"  # long one-time work (the model's ONNX export) says so


class _StderrLines(logging.Handler):
    """Each record as a plain line on the stderr of the moment (tests swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(self.format(record), file=sys.stderr, flush=True)
        except Exception:  # a closed stream: the line is lost, the command is not
            self.handleError(record)


def notices_on_stderr() -> None:
    """Show the embedding adapter's progress lines (INFO and up) as plain lines on stderr,
    once per process, and there only (a server's log would repeat them)."""
    logger = logging.getLogger(NOTICES)
    if any(isinstance(h, _StderrLines) for h in logger.handlers):
        return
    logger.addHandler(_StderrLines())
    logger.setLevel(logging.INFO)
    logger.propagate = False

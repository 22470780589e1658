"""The whole refresh pipeline on real files: Markdown, SQLite + sqlite-vec, the real model,
Graphify, wired by the real container; plus the `ai-memory` command in a child process."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest
import Stemmer
from attrs import evolve
from dependency_injector import providers

from memory.adapters.markdown import MarkdownNoteSource
from memory.adapters.sqlite import SqliteEmbeddingCache
from memory.adapters.sqlite.stage import SqliteIndexStage
from memory.domain.refresh import RefreshReport
from memory.domain.text import content_terms
from memory.entrypoints import cli
from memory.entrypoints.container import build
from memory.entrypoints.settings import Settings

TICKET = "Repos/alpha/Tickets/ALPHA-142/Retry Decision.md"
TUNING = "Repos/alpha/Notes/Backoff tuning.md"
ESPRESSO = "Home/Espresso machine care.md"
BROKEN = "Decisions/Broken front matter.md"
PARAPHRASE = "how do I clean mineral buildup from the coffee maker"

NOTES = {
    TICKET: """\
---
type: decision
status: active
created: 2026-01-10
---
# ALPHA-142: Retry Decision

We decided to retry failed payment captures three times with jittered
exponential backoff, starting at 200 ms and capped at 5 seconds.

## Why not more retries

More attempts amplified the incident load on the processor; three was
enough to ride out the short blips we measured.
""",
    # A ticket named only by its folder, as people often leave it.
    "Repos/alpha/Tickets/ALPHA-150/Session notes.md": """\
# Session notes

Pairing session about token rotation for the partner gateway.
Rotation happens nightly; the old token stays valid for one hour.
""",
    TUNING: """\
# Backoff tuning

## Baseline

The capture worker retried immediately, which hammered the processor.
Latency graphs showed spikes right after every deploy.

## Jitter

Full jitter spreads the retries over the whole window, so clients
stop synchronising after an outage.

## Caps

The ceiling keeps a single capture from waiting longer than five seconds.
""",
    "Repos/nexus/Notes/Deploy freeze.md": """\
# Deploy freeze

NX-401 froze deploys of the nexus gateway until the certificate chain was fixed.
The freeze lasted two days.
""",
    "Repos/nexus/Notes/Gateway certificates.md": """\
# Gateway certificates

NX-410 tracks renewing the nexus gateway certificate chain before it expires;
the gateway freeze after deploys is described elsewhere.
""",
    "Tools/Windows launcher.md": """\
# Windows launcher

The agent starts without a console window through scripts/launch-hidden.vbs,
which wraps the PowerShell entry point.
""",
    "Tools/Shell launcher.md": """\
# Shell launcher

On Linux the agent starts from scripts/launch.sh; a hidden window is not needed there.
The launch script exports the environment first.
""",
    "Repos/ci/Notes/Artifact uploads.md": """\
# Artifact uploads

The nightly build failed with:

```
ECONNRESET while uploading artifact
```

The storage proxy drops idle keep-alive sockets after 60 seconds; we now
retry the upload on a fresh connection.
""",
    "Repos/ci/Notes/Artifact retention.md": """\
# Artifact retention

Build artifacts are kept for thirty days; uploading large artifacts is
throttled during business hours.
""",
    ESPRESSO: """\
# Espresso machine care

Every month, run a citric acid solution through the boiler to dissolve limescale,
then flush twice with fresh water before pulling shots again.
""",
    BROKEN: """\
---
title: [unclosed
status: active
---
# Zanzibarite ledger

The zanzibarite ledger keeps the mapping between warehouse codes and regions.
""",
}


def write_notes(root: Path, notes: dict[str, str]) -> None:
    for rel, text in notes.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def chunk_hashes(root: Path, rel: str | None = None) -> dict[str, str]:
    """hash -> indexed text of every chunk of the root (or of one note), as the indexer sees."""
    source = MarkdownNoteSource(root)
    paths = [rel] if rel else sorted(source.scan().files)
    return {c.hash: c.indexed_text for p in paths for c in source.load(p).chunks}


def ai_memory(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*AI_MEMORY, *args], capture_output=True, text=True, timeout=timeout,
                          check=False)


_SCRIPT = Path(sys.executable).with_name("ai-memory")
AI_MEMORY = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "memory"]


class Memory:
    """One memory root and its real container; every document the model embeds is recorded."""

    def __init__(self, root: Path, embedder=None):
        self.root = root
        self.app = build(Settings.resolve(str(root)))
        if embedder is not None:  # a model already loaded in this process
            self.app.gateways.embedder.override(providers.Object(embedder))
        self.service = self.app.use_cases.service()
        self.generations = self.app.gateways.index()
        self.embedder = self.app.gateways.embedder()
        self.embedded: list[str] = []
        self.initial: RefreshReport | None = None

    def record_embeddings(self) -> None:
        embed = self.embedder.embed_documents

        def recording(texts):
            texts = list(texts)
            self.embedded.extend(texts)
            return embed(texts)

        self.embedder.embed_documents = recording

    def current_id(self) -> str:
        return self.generations.current().id

    def search(self, query: str, **filters):
        return self.service.search(query, **filters)


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory):
    """One model cache for the session (this process and the `ai-memory` children), so the
    ONNX export happens once and nothing is written to the user's own cache."""
    shared = tmp_path_factory.getbasetemp() / "shared-model-cache"
    shared.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AI_MEMORY_MODEL_CACHE", str(shared))
        yield shared


@pytest.fixture(scope="module")
def memory(tmp_path_factory, model_cache) -> Memory:
    root = tmp_path_factory.mktemp("memory-root")
    write_notes(root, NOTES)
    mem = Memory(root)
    mem.record_embeddings()
    mem.initial = mem.service.refresh("full")
    return mem


def index_stage(report):
    return report.stage("index")


def top_item(packet):
    assert packet.items, packet.as_dict()
    return packet.items[0]


# -- a first refresh -----------------------------------------------------------------------

def test_a_full_refresh_indexes_every_note_with_a_vector_per_chunk(memory):
    report = memory.initial
    assert report.ok, report.as_dict()
    index = index_stage(report)
    assert index.outcome == "published" and report.stage("graph").outcome == "published"
    hashes = chunk_hashes(memory.root)
    assert (index.added, index.embedded, index.reused_vectors) == (len(NOTES), len(hashes), 0)
    current = memory.generations.current()
    assert current.id == index.generation
    assert current.notes == len(NOTES) and current.vectors == current.chunks >= len(hashes)
    assert current.model_id == memory.embedder.model_id and current.dimension == 384
    assert memory.service.health().healthy


def test_bad_front_matter_is_indexed_from_its_body_with_a_warning(memory):
    warnings = [w for w in memory.initial.warnings if w.startswith(BROKEN)]
    assert len(warnings) == 1 and "front matter ignored" in warnings[0]
    item = top_item(memory.search("zanzibarite ledger"))
    assert (item.path, item.title) == (BROKEN, "Zanzibarite ledger")
    assert item.signals.lexical is not None


# -- finding things ------------------------------------------------------------------------

@pytest.mark.parametrize(("query", "path"), [
    ("ALPHA-142", TICKET),
    ("NX-401", "Repos/nexus/Notes/Deploy freeze.md"),
    ("NX-410", "Repos/nexus/Notes/Gateway certificates.md"),
    ("scripts/launch-hidden.vbs", "Tools/Windows launcher.md"),
    ("ECONNRESET while uploading artifact", "Repos/ci/Notes/Artifact uploads.md"),
])
def test_identifier_path_and_error_queries_rank_the_right_note_first(memory, query, path):
    item = top_item(memory.search(query))
    assert item.path == path
    assert item.signals.lexical == 1


def test_a_ticket_named_only_by_its_folder_is_still_found_first(memory):
    item = top_item(memory.search("ALPHA-150"))
    assert item.path == "Repos/alpha/Tickets/ALPHA-150/Session notes.md"
    assert "ticket:ALPHA-150" in item.reasons


def test_a_paraphrase_sharing_no_word_is_found_by_meaning(memory):
    porter = Stemmer.Stemmer("porter")
    note_text = " ".join(chunk_hashes(memory.root, ESPRESSO).values())
    shared = set(porter.stemWords(content_terms(PARAPHRASE))) & \
        set(porter.stemWords(content_terms(note_text)))
    assert shared == set()  # the premise: nothing for the lexical index to match
    packet = memory.search(PARAPHRASE)
    assert not packet.no_answer
    item = next(i for i in packet.items if i.path == ESPRESSO)
    assert item.signals.semantic is not None and item.signals.lexical is None


def test_cli_search_returns_the_ticket_note_first_with_a_citation(memory):
    done = ai_memory("search", "ALPHA-142", "--json", "--root", str(memory.root))
    assert done.returncode == 0, done.stderr
    packet = json.loads(done.stdout)
    assert packet["generation"]["index"] == memory.current_id()
    item = packet["items"][0]
    assert item["path"] == TICKET and item["heading"] == "ALPHA-142: Retry Decision"
    assert item["signals"]["lexical"] is not None
    start, end = item["start_line"], item["end_line"]
    lines = (memory.root / TICKET).read_text(encoding="utf-8").split("\n")
    assert 1 <= start <= end <= len(lines)
    assert item["text"] == "\n".join(lines[start - 1:end])
    assert item["citation"] == f"{TICKET}:L{start}-L{end}"


# -- refreshing after edits ----------------------------------------------------------------

def test_editing_one_note_embeds_only_its_changed_chunks(memory):
    before = chunk_hashes(memory.root, TUNING)
    path = memory.root / TUNING
    path.write_text(path.read_text(encoding="utf-8").replace(
        "longer than five seconds.", "longer than eight seconds, raised after ALPHA-142."),
        encoding="utf-8")
    after = chunk_hashes(memory.root, TUNING)
    changed = set(after) - set(before)
    assert 0 < len(changed) < len(after)
    old_id, seen = memory.current_id(), len(memory.embedded)

    index = index_stage(memory.service.refresh("index"))
    assert index.outcome == "published" and index.previous == old_id
    assert (index.added, index.changed, index.removed) == (0, 1, 0)
    assert index.embedded == len(changed)
    assert index.reused_vectors == len(after) - len(changed)
    assert sorted(memory.embedded[seen:]) == sorted(after[h] for h in changed)
    item = top_item(memory.search("raised to eight seconds"))
    assert item.path == TUNING and "eight seconds" in item.text

    again = index_stage(memory.service.refresh("full"))
    assert again.outcome == "published"
    assert (again.embedded, again.reused_vectors) == (0, len(chunk_hashes(memory.root)))
    counts = Counter(memory.embedded)
    assert max(counts.values()) == 1, "a chunk was embedded twice across generations"


def test_a_failing_validation_keeps_the_last_good_generation_serving(memory, monkeypatch, capsys):
    def damaged(stage):
        return evolve(good_facts(stage), integrity="database disk image is malformed")

    good_facts = SqliteIndexStage.facts
    monkeypatch.setattr(SqliteIndexStage, "facts", damaged)
    old_id = memory.current_id()
    path = memory.root / "Repos/ci/Notes/Artifact retention.md"
    path.write_text(path.read_text(encoding="utf-8") + "\nQuokka uploads are exempt.\n",
                    encoding="utf-8")

    report = memory.service.refresh("index")
    index = index_stage(report)
    assert not report.ok and index.outcome == "kept-last-good"
    assert index.generation == old_id and "integrity" in index.reason
    assert memory.current_id() == old_id
    packet = memory.search("quokka uploads")
    assert packet.generation.index == old_id
    assert all("Quokka" not in i.text for i in packet.items)
    staging = memory.root / ".ai-memory" / "index" / "staging"
    assert not staging.exists() or not any(staging.iterdir())

    capsys.readouterr()
    assert cli.main(["refresh", "--root", str(memory.root), "--json"]) != 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["ok"] is False and printed["index_generation"] == old_id
    assert memory.current_id() == old_id

    monkeypatch.undo()
    assert index_stage(memory.service.refresh("index")).outcome == "published"
    assert top_item(memory.search("quokka uploads")).path == "Repos/ci/Notes/Artifact retention.md"


def test_deleting_the_state_folder_and_refreshing_rebuilds_everything(memory):
    # The same container, as the long-running server (and its watcher) would see it.
    state = memory.root / ".ai-memory"
    shutil.rmtree(state)
    report = memory.service.refresh("index")
    assert report.ok, report.as_dict()
    index = index_stage(report)
    hashes = chunk_hashes(memory.root)
    assert index.outcome == "published" and index.previous is None
    assert (index.added, index.embedded, index.reused_vectors) == (len(NOTES), len(hashes), 0)
    assert memory.generations.current().notes == len(NOTES)
    cached = SqliteEmbeddingCache(state).get_many(memory.embedder.model_id, hashes)
    assert set(cached) == set(hashes)  # the new cache file on disk holds every vector
    full = memory.service.refresh("full")
    assert full.ok and full.stage("graph").outcome == "published"
    assert index_stage(full).embedded == 0
    assert top_item(memory.search("NX-401")).path == "Repos/nexus/Notes/Deploy freeze.md"
    assert memory.service.health().healthy


# -- a refresh killed midway ---------------------------------------------------------------

TOPICS = ["retry backoff", "webhook signature", "token refresh", "rate limiting", "cache warmup",
          "schema migration", "feature flag", "dead letter queue", "connection pool",
          "circuit breaker", "secret rotation", "canary rollout"]


def many_notes(count: int, edition: int = 0) -> dict[str, str]:
    notes = {}
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        notes[f"Repos/repo-{i % 6}/Notes/note-{i:03d}.md"] = (
            f"# KP-{i:03d} {topic}\n\nHow the {topic} of service {i % 17} behaves "
            f"(edition {edition}); see [[note-{(i * 7) % count:03d}]].\n")
    return notes


def kill_tree(proc: subprocess.Popen, delay: float) -> bool:
    """SIGKILL the refresh (and the graph builder it started) after delay; True if it ran."""
    time.sleep(delay)
    alive = proc.poll() is None
    children = []
    if alive:
        proc.send_signal(signal.SIGSTOP)  # frozen, it cannot start a child we would miss
        try:
            children = psutil.Process(proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            pass
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    for child in children:
        try:
            if os.getpgid(child.pid) == child.pid:  # the graph builder leads its own group
                os.killpg(child.pid, signal.SIGKILL)
            else:
                child.kill()
        except (ProcessLookupError, psutil.NoSuchProcess):
            pass
    psutil.wait_procs(children, timeout=30)
    return alive


def test_killing_a_refresh_midway_leaves_the_previous_generation_serving(memory, tmp_path):
    root = tmp_path / "big-root"
    write_notes(root, many_notes(300))
    big = Memory(root, embedder=memory.embedder)
    assert big.service.refresh("full").ok
    rng = random.Random(142)
    kept_previous = 0
    for trial in range(1, 4):
        previous = big.current_id()
        edited = dict(list(many_notes(300, edition=trial).items())[trial * 20:trial * 20 + 20])
        write_notes(root, edited)
        proc = subprocess.Popen([*AI_MEMORY, "refresh", "--mode", "full", "--root", str(root)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=dict(os.environ))
        killed_while_running = kill_tree(proc, rng.uniform(0.3, 2.5))

        serving = big.current_id()
        packet = big.search("KP-123 connection pool")
        assert packet.generation.index == serving and packet.items
        assert big.generations.check_current() == []
        if serving == previous:
            kept_previous += killed_while_running
        else:  # the kill came after the publish: what is served is the complete new one
            assert big.generations.current().notes == 300
        report = big.service.refresh("index")
        assert report.ok, report.as_dict()
        assert index_stage(report).outcome in ("published", "unchanged")
        assert big.generations.current().notes == 300
        assert f"(edition {trial})" in top_item(big.search(f"KP-{trial * 20:03d}")).text
    assert kept_previous >= 1, "no trial killed the refresh before it published"

"""Embedder speed: chunks/s for a build and ms per query, per backend, on this machine.

    .venv/bin/python benchmarks/embedder_speed.py                      # defaults below
    .venv/bin/python benchmarks/embedder_speed.py --variants torch@256 onnx@256 --rounds 3
    .venv/bin/python benchmarks/embedder_speed.py --corpus ../shared/eval/locomo-dev/memory

Each variant runs in its own process (cold imports, clean thread pools) through the real
SentenceTransformerEmbedder; rounds are interleaved and the best round is kept, since
other work on a shared 2-core machine can only slow a round down. `cosine` compares each
variant's vectors with torch at the same max_seq_length (same texts, same truncation).
`onnx-int8` is the adapter's int8 precision (the default: per-channel int8 weights);
`torch-qint8` is torch's dynamic int8 quantization, built here for comparison only.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DEFAULT_VARIANTS = ("torch@256", "onnx@256", "onnx-int8@256", "onnx@128", "onnx-int8@128",
                    "torch-qint8@256")
QUERIES = ("how do we retry failed payment webhooks", "ALPHA-142 timeout",
           "who owns the nightly backup job", "why was the v2 schema rolled back",
           "ConnectionResetError in the ingest worker", "rate limits of the billing API")

SUBJECTS = ("payments-service", "the auth gateway", "the ingest worker", "ALPHA-142", "NX-401",
            "the billing API", "the deploy pipeline", "src/memory/adapters/sqlite/store.py",
            "the retry policy", "the Redis cache", "the nightly backup job",
            "the Kafka consumer group", "the feature flag rollout", "migration 0042",
            "the MCP server")
VERBS = ("fails with", "was changed to use", "depends on", "should not call", "times out on",
         "now validates", "was rolled back because of", "retries on", "logs a warning about",
         "is owned by the team that handles")
OBJECTS = ("a 30s timeout", "ConnectionResetError", "exponential backoff with jitter",
           "the staging cluster", "expired JWT tokens", "HTTP 503 from upstream",
           "a missing index on user_id", "the v2 schema", "rate limits of 100 req/s",
           "stale embeddings in the cache")
TAILS = ("", " (see the runbook).", " Fixed in PR #318.", "; decided on 2024-05-02.",
         " Ask Dana before changing it.", ", which broke the canary.")


def synthetic_chunks(count: int, seed: int = 7) -> list[str]:
    """8-line Markdown chunks like a coding agent's notes: a heading, bullets, code."""
    rnd = random.Random(seed)
    chunks = []
    for _ in range(count):
        lines = [f"## Notes on {rnd.choice(SUBJECTS)}"]
        for _ in range(7):
            roll = rnd.random()
            if roll < 0.12:
                lines.append("")
            elif roll < 0.25:
                lines.append(f"`{rnd.choice(OBJECTS)}` seen in {rnd.choice(SUBJECTS)}")
            else:
                lines.append(f"- {rnd.choice(SUBJECTS).capitalize()} {rnd.choice(VERBS)} "
                             f"{rnd.choice(OBJECTS)}{rnd.choice(TAILS)}")
        chunks.append("\n".join(lines))
    return chunks


def corpus_chunks(folder: Path, count: int) -> list[str]:
    """8-line windows (stride 4) over the Markdown files of a folder, sorted by path."""
    chunks = []
    for path in sorted(folder.rglob("*.md")):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        chunks += ["\n".join(lines[i:i + 8]) for i in range(0, max(1, len(lines) - 4), 4)]
    return chunks[:count]


def build_embedder(variant: str, cache_dir: Path, batch_size: int):
    from memory.adapters.embeddings import SentenceTransformerEmbedder

    backend, _, seq = variant.partition("@")
    base = backend.removesuffix("-qint8").removesuffix("-int8")
    embedder = SentenceTransformerEmbedder(
        backend=base, cache_dir=cache_dir, max_seq_length=int(seq or 256),
        batch_size=batch_size, precision="int8" if backend.endswith("-int8") else "fp32")
    if not embedder.wait_ready(900):
        raise SystemExit(f"{variant}: {embedder.state()}")
    if backend.endswith("-qint8"):
        quantize(embedder, cache_dir)
    return embedder


def quantize(embedder, cache_dir: Path) -> None:
    """Swap the loaded torch model for a dynamically int8-quantized copy (comparison only)."""
    import torch

    encoder = embedder._encoder
    encoder._model = torch.ao.quantization.quantize_dynamic(
        encoder._model, {torch.nn.Linear}, dtype=torch.qint8)


def run_one(variant: str, texts: list[str], cache_dir: Path, vectors_out: Path,
            batch_size: int) -> dict:
    started = time.perf_counter()
    embedder = build_embedder(variant, cache_dir, batch_size)
    load_s = time.perf_counter() - started
    embedder.embed_documents(texts[:64])  # first-call allocations out of the timing
    wall, cpu = time.perf_counter(), time.process_time()
    vectors = embedder.embed_documents(texts)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    latencies = []
    for i in range(60):
        t0 = time.perf_counter()
        embedder.embed_query(QUERIES[i % len(QUERIES)])
        latencies.append((time.perf_counter() - t0) * 1000)
    np.save(vectors_out, vectors)
    return {"variant": variant, "backend": embedder.backend, "load_s": round(load_s, 2),
            "chunks_per_s": round(len(texts) / wall, 1),
            "cpu_ms_per_chunk": round(cpu * 1000 / len(texts), 2),
            "query_ms_p50": round(statistics.median(latencies), 2),
            "query_ms_p90": round(statistics.quantiles(latencies, n=10)[-1], 2)}


def child(args) -> None:
    texts = json.loads(Path(args.texts).read_text(encoding="utf-8"))
    result = run_one(args.child, texts, Path(args.cache_dir), Path(args.vectors), args.batch_size)
    sys.stdout.write(json.dumps(result) + "\n")


def token_stats(texts: list[str], max_seq_length: int) -> str:
    from tokenizers import Tokenizer

    from memory.adapters.embeddings.packaged_model import packaged_model_dir

    tokenizer = Tokenizer.from_file(str(packaged_model_dir() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    counts = [len(e.ids) for e in tokenizer.encode_batch(texts)]
    over = sum(c > max_seq_length for c in counts)
    return (f"{len(texts)} chunks, {statistics.mean(len(t) for t in texts):.0f} chars and "
            f"{statistics.mean(counts):.0f} tokens on average, {over} over {max_seq_length}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=list(DEFAULT_VARIANTS))
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--corpus", type=Path, help="folder of Markdown files to cut into chunks")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--cache-dir", type=Path, help="where the onnx export is cached")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--texts", help=argparse.SUPPRESS)
    parser.add_argument("--vectors", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    if args.corpus:
        texts = corpus_chunks(args.corpus, args.chunks)
    else:
        texts = synthetic_chunks(args.chunks)
    work = Path(tempfile.mkdtemp(prefix="embedder-speed-"))
    cache_dir = args.cache_dir or work / "cache"
    (work / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
    print(token_stats(texts, 256), flush=True)
    best: dict[str, dict] = {}
    for round_no in range(args.rounds):
        for variant in args.variants:
            vectors = work / f"{variant}.npy"
            done = subprocess.run(
                [sys.executable, __file__, "--child", variant, "--texts", str(work / "texts.json"),
                 "--cache-dir", str(cache_dir), "--vectors", str(vectors),
                 "--batch-size", str(args.batch_size)],
                capture_output=True, text=True, check=False)
            if done.returncode != 0:
                print(f"{variant}: failed\n{done.stderr[-2000:]}", flush=True)
                continue
            result = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"round {round_no + 1}: {json.dumps(result)}", flush=True)
            if variant not in best or result["chunks_per_s"] > best[variant]["chunks_per_s"]:
                best[variant] = result
            else:  # keep the best throughput, and the best latency seen in any round
                best[variant]["query_ms_p50"] = min(best[variant]["query_ms_p50"],
                                                    result["query_ms_p50"])
    report(best, work)


def report(best: dict[str, dict], work: Path) -> None:
    print(f"\n{'variant':16} {'backend':7} {'load s':>7} {'chunks/s':>9} {'cpu ms/chunk':>13} "
          f"{'query p50 ms':>13} {'p90':>7} {'cos min':>8} {'cos mean':>9}")
    for variant, r in best.items():
        seq = variant.partition("@")[2] or "256"
        reference = work / f"torch@{seq}.npy"
        cos = "n/a", "n/a"
        if reference.exists():
            sims = (np.load(work / f"{variant}.npy") * np.load(reference)).sum(axis=1)
            cos = f"{sims.min():.4f}", f"{sims.mean():.4f}"
        print(f"{variant:16} {r['backend']:7} {r['load_s']:7.2f} {r['chunks_per_s']:9.1f} "
              f"{r['cpu_ms_per_chunk']:13.2f} {r['query_ms_p50']:13.2f} {r['query_ms_p90']:7.2f} "
              f"{cos[0]:>8} {cos[1]:>9}")


if __name__ == "__main__":
    main()

"""SentenceTransformerEmbedder with the real packaged model, on every backend installed here."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from memory.adapters.embeddings import SentenceTransformerEmbedder
from memory.domain.model_state import EmbedderState
from memory.ports.embedder import Embedder
from memory.ports.errors import EmbedderUnavailable

SRC = str(Path(__file__).resolve().parents[3] / "src")
# (backend, precision): the float model on both backends, and its int8 graph.
# onnxruntime and onnx are required dependencies: without them these tests fail, never skip.
KINDS = [("torch", "fp32"), ("onnx", "fp32"), ("onnx", "int8")]
# How close a text's vector stays whatever it was embedded with. onnx runs each text alone,
# so its vectors are the same to float precision; torch batches (padding moves the last bits).
SAME_TEXT = {"torch": 0.9999, "onnx": 0.999999}
TEXTS = [
    "The payments service retries failed webhooks three times with exponential backoff.",
    "ok",
    "## ALPHA-142\n- src/memory/adapters/sqlite/store.py fails with ConnectionResetError\n"
    "- fixed in PR #318 by raising the pool size",
    "",
    "Nightly backups copy the PostgreSQL WAL to cold storage. " * 30,
    "Who owns the deploy pipeline?",
    "Redis cache eviction policy",
]


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("embedder-cache")


@pytest.fixture(scope="module", params=KINDS, ids=lambda kind: "-".join(kind))
def embedder(request, onnx_cache):
    backend, precision = request.param
    model = SentenceTransformerEmbedder(backend=backend, cache_dir=onnx_cache, batch_size=3,
                                        precision=precision)
    assert model.wait_ready(900), model.state()
    assert model.backend == backend and model.precision == precision
    return model


def run_python(code: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                          capture_output=True, timeout=900, check=False)


def cosine(a, b) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_identity_is_known_without_loading():
    model = SentenceTransformerEmbedder()
    assert isinstance(model, Embedder)
    assert model.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert model.dimension == 384
    assert model.state() is EmbedderState.NOT_LOADED and model.backend is None
    assert SentenceTransformerEmbedder(max_seq_length=128).model_id.endswith("@128")
    int8 = SentenceTransformerEmbedder(precision="int8", max_seq_length=128)
    assert int8.model_id == "sentence-transformers/all-MiniLM-L6-v2+int8@128"
    assert int8.state() is EmbedderState.NOT_LOADED


def test_bad_settings_are_refused():
    with pytest.raises(ValueError):
        SentenceTransformerEmbedder(backend="tensorflow")
    with pytest.raises(ValueError):
        SentenceTransformerEmbedder(max_seq_length=1024)
    with pytest.raises(ValueError):
        SentenceTransformerEmbedder(batch_size=0)
    with pytest.raises(ValueError, match="precision"):
        SentenceTransformerEmbedder(precision="fp16")
    with pytest.raises(ValueError, match="onnx backend only"):
        SentenceTransformerEmbedder(precision="int8", backend="torch")


def test_vectors_are_unit_float32_of_the_model_dimension(embedder):
    vectors = embedder.embed_documents(TEXTS)
    assert isinstance(vectors, np.ndarray) and vectors.dtype == np.float32
    assert vectors.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    query = embedder.embed_query("retry policy")
    assert query.dtype == np.float32 and query.shape == (384,)
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-4
    assert embedder.embed_documents([]).shape == (0, 384)


def test_order_is_kept_through_length_sorted_batches(embedder):
    vectors = embedder.embed_documents(TEXTS)  # batch_size=3: several batches, mixed lengths
    for text, vector in zip(TEXTS, vectors):
        assert cosine(vector, embedder.embed_query(text)) > SAME_TEXT[embedder.backend]
    # Each text is nearest to its own vector, whatever batch it was embedded in.
    alone = np.stack([embedder.embed_query(text) for text in TEXTS])
    distinct = [i for i, t in enumerate(TEXTS) if TEXTS.index(t) == i]
    assert all(int(np.argmax(vectors[distinct] @ alone[i])) == distinct.index(i) for i in distinct)


def test_vectors_are_deterministic(embedder):
    assert np.allclose(embedder.embed_documents(TEXTS), embedder.embed_documents(TEXTS), atol=1e-5)


def test_a_vector_does_not_depend_on_the_texts_embedded_with_it(embedder):
    short, long = TEXTS[1], TEXTS[4]  # a 2-token text in one call with a 256-token one
    together = embedder.embed_documents([long, short])
    for text, vector in zip((long, short), together):
        assert cosine(vector, embedder.embed_documents([text])[0]) > SAME_TEXT[embedder.backend]


def test_a_paraphrase_is_closer_than_unrelated_text(embedder):
    anchor, paraphrase, unrelated = embedder.embed_documents([
        "How do I reset my password?",
        "What are the steps to change a forgotten password?",
        "The recipe needs two cups of flour and one egg."])
    assert cosine(anchor, paraphrase) > cosine(anchor, unrelated) + 0.3


def test_queries_from_several_threads_during_a_build(embedder):
    expected = embedder.embed_query(TEXTS[0])
    results, errors = [], []

    def ask():
        try:
            for _ in range(5):
                results.append(embedder.embed_query(TEXTS[0]))
        except Exception as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(3)]
    for thread in threads:
        thread.start()
    built = embedder.embed_documents(TEXTS * 4)
    for thread in threads:
        thread.join()
    assert not errors and len(results) == 15
    assert all(cosine(r, expected) > 0.9999 for r in results)  # one text alone: same batch
    assert cosine(built[0], expected) > SAME_TEXT[embedder.backend]


def test_onnx_gives_the_torch_vectors(onnx_cache):
    torch_model = SentenceTransformerEmbedder(backend="torch")
    onnx_model = SentenceTransformerEmbedder(backend="onnx", cache_dir=onnx_cache)
    a, b = torch_model.embed_documents(TEXTS), onnx_model.embed_documents(TEXTS)
    assert (a * b).sum(axis=1).min() >= 0.999
    assert list(onnx_cache.glob("onnx/*/model.onnx"))


def test_int8_vectors_stay_close_to_the_float_ones_and_rank_alike(onnx_cache):
    float_model = SentenceTransformerEmbedder(backend="onnx", cache_dir=onnx_cache)
    int8_model = SentenceTransformerEmbedder(backend="onnx", cache_dir=onnx_cache,
                                             precision="int8")
    a, b = float_model.embed_documents(TEXTS), int8_model.embed_documents(TEXTS)
    assert (a * b).sum(axis=1).min() >= 0.95
    assert list(onnx_cache.glob("onnx/*/model-int8.onnx"))
    query = "what happens when a webhook fails?"
    assert int(np.argmax(a @ float_model.embed_query(query))) == \
        int(np.argmax(b @ int8_model.embed_query(query))) == 0


def test_int8_never_falls_back_to_torch(tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")
    auto = SentenceTransformerEmbedder(backend="auto", cache_dir=blocked, precision="int8")
    assert auto.wait_ready(300) is False and auto.state() is EmbedderState.FAILED
    assert auto.backend is None
    no_cache = SentenceTransformerEmbedder(precision="int8")
    assert no_cache.wait_ready(60) is False and "cache_dir" in no_cache.failure()


def test_state_moves_from_not_loaded_through_loading_to_ready():
    model = SentenceTransformerEmbedder(backend="torch")
    assert model.state() is EmbedderState.NOT_LOADED
    model.warm()  # returns at once: loading happens in the background
    assert model.state() in (EmbedderState.LOADING, EmbedderState.READY)
    model.warm()  # idempotent
    assert model.wait_ready(300) and model.state() is EmbedderState.READY


def test_missing_model_fails_with_a_reason_and_never_fakes_vectors(tmp_path):
    model = SentenceTransformerEmbedder(model_dir=tmp_path, backend="torch")
    assert model.wait_ready(60) is False
    assert model.state() is EmbedderState.FAILED and "model files missing" in model.failure()
    with pytest.raises(EmbedderUnavailable):
        model.embed_documents(["anything"])
    with pytest.raises(EmbedderUnavailable):
        model.embed_query("anything")


def test_onnx_without_a_cache_dir_fails_and_auto_without_one_runs_torch():
    explicit = SentenceTransformerEmbedder(backend="onnx")
    assert explicit.wait_ready(60) is False and explicit.state() is EmbedderState.FAILED
    auto = SentenceTransformerEmbedder(backend="auto")
    assert auto.wait_ready(300) and auto.backend == "torch"


def test_auto_falls_back_to_torch_when_the_onnx_export_cannot_be_made(tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")
    auto = SentenceTransformerEmbedder(backend="auto", cache_dir=blocked)
    assert auto.wait_ready(300) and auto.backend == "torch"
    explicit = SentenceTransformerEmbedder(backend="onnx", cache_dir=blocked)
    assert explicit.wait_ready(300) is False and explicit.state() is EmbedderState.FAILED


def test_importing_the_adapter_imports_no_model_library():
    done = run_python("""
        import sys
        import memory.adapters.embeddings
        heavy = {"torch", "sentence_transformers", "transformers", "onnxruntime"} & set(sys.modules)
        assert not heavy, heavy
        print("clean")
    """)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"clean\n"


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: "-".join(kind))
def test_loading_and_embedding_print_nothing_to_stdout(kind, tmp_path):
    done = run_python("""
        import sys
        from memory.adapters.embeddings import SentenceTransformerEmbedder
        model = SentenceTransformerEmbedder(backend=sys.argv[1], cache_dir=sys.argv[3],
                                            precision=sys.argv[2])
        model.warm()
        assert model.wait_ready(900), model.state()
        model.embed_documents(["one", "two"] * 40)
        model.embed_query("three")
        sys.stderr.write("done " + model.state().value)
    """, *kind, str(tmp_path))  # a fresh cache: the onnx export (and quantization) run here too
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr.decode().endswith("done ready")
    assert done.stdout == b""

"""OnnxEncoder: the model as an ONNX graph on onnxruntime, with the Rust tokenizer.

The graph is exported once from the packaged torch weights, in a child process (see
onnx_export), and cached under `<cache_dir>/onnx/<fingerprint>/`. Running it needs
neither torch nor transformers, so a server on this backend never imports them.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

EXPORT_RECIPE = 1  # bump when onnx_export changes what it writes
FINGERPRINTED = ("config.json", "model.safetensors", "tokenizer.json")
GRAPH_NAME = "model.onnx"
QUANTIZED_NAME = "model-int8.onnx"
EXPORT_TIMEOUT_S = 900.0
# The first start on a machine pauses this long: say what and why, on stderr (a log line),
# never on stdout, which is the stdio server's protocol channel.
EXPORTING = ("exporting the embedding model to ONNX once (about 30 s) into {target}; "
             "later starts reuse it")
QUANTIZING = "quantizing the ONNX model to int8 once (about 30 s) into {target}"
log = logging.getLogger(__name__)


class OnnxExportFailed(RuntimeError):
    """The ONNX graph could not be exported or did not match the torch model."""


def mean_pooled(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of token vectors over the attention mask, L2-normalized (the model's pooling)."""
    weights = mask[..., None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    vectors = summed / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.clip(norms, 1e-12, None)).astype(np.float32)


def fingerprint(model_dir: Path) -> str:
    """Identity of the source weights and of the recipe and runtime that exported them."""
    import onnxruntime

    digest = hashlib.sha256(f"recipe={EXPORT_RECIPE};ort={onnxruntime.__version__}".encode())
    for name in FINGERPRINTED:
        stat = (model_dir / name).stat()
        digest.update(f";{name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def exported_graph(model_dir: Path, cache_dir: Path, precision: str = "fp32") -> Path:
    """The cached ONNX graph for this model and precision ("fp32" or "int8"), exported
    (and quantized) first if there is none."""
    target = cache_dir / "onnx" / fingerprint(model_dir)
    if not (target / GRAPH_NAME).is_file():
        log.info(EXPORTING.format(target=target))
        _run_export(model_dir, target)
    if precision == "fp32":
        return target / GRAPH_NAME
    if not (target / QUANTIZED_NAME).is_file():
        log.info(QUANTIZING.format(target=target))
        _run_export(model_dir, target, "--int8")
    if not (target / QUANTIZED_NAME).is_file():
        raise OnnxExportFailed("int8 quantization wrote no graph")
    return target / QUANTIZED_NAME


def _run_export(model_dir: Path, target: Path, *flags: str) -> None:
    # A child process keeps torch out of this one, and its stdout away from ours (the
    # stdio server's protocol channel).
    package_root = Path(__file__).resolve().parents[3]
    env = dict(os.environ)  # the child's environment: ours, with the switches below
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HUB_DISABLE_PROGRESS_BARS="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(package_root),
                                                         env.get("PYTHONPATH")])))
    command = [sys.executable, "-m", "memory.adapters.embeddings.onnx_export", *flags,
               str(model_dir), str(target)]
    try:
        done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=EXPORT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OnnxExportFailed(f"onnx export did not run: {exc}") from exc
    if done.returncode != 0 or not (target / GRAPH_NAME).is_file():
        step = "int8 quantization" if flags else "onnx export"
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        raise OnnxExportFailed(f"{step} failed (exit {done.returncode}): " + " | ".join(tail))


class OnnxEncoder:
    """Runs the graph one text at a time on single-thread runs, `workers` runs at once.

    A text alone is neither padded nor quantized with batch-mates (int8 activations take
    one scale per run), so its vector depends on its own text only: an incremental refresh
    writes the vectors a rebuild would. onnxruntime runs one session from several threads,
    and on 2 cores two single-thread runs outpace one two-thread batch of 64 by 40-70 %
    (docs/benchmarks.md); a query also answers faster on one thread (1.8 against 2.3 ms).
    """

    name = "onnx"

    def __init__(self, session, tokenizer, workers: int = 1):
        self._session = session
        self._tokenizer = tokenizer
        self._inputs = {i.name for i in session.get_inputs()}
        self._workers = max(1, workers)

    @classmethod
    def open(cls, model_dir: Path, graph: Path, max_seq_length: int, threads: int) -> OnnxEncoder:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # parallel across texts instead (see the class)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only; warnings would be noise on stderr
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # tokenizer.json pads every text to a fixed 128; pad to the batch's longest instead.
        tokenizer.enable_truncation(max_length=max_seq_length)
        pad_id = tokenizer.token_to_id("[PAD]") or 0
        tokenizer.enable_padding(pad_id=pad_id, pad_token="[PAD]")
        return cls(session, tokenizer, workers=threads)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors for one batch (one run), in the order given."""
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask,
                "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
        return mean_pooled(hidden, mask)

    def encode_documents(self, texts: list[str], batch_size: int) -> np.ndarray:
        """Unit vectors in the order given, each text in a run of its own (batch_size is
        the torch backend's; here every vector is independent of the others)."""
        if len(texts) <= 1 or self._workers == 1:
            return np.concatenate([self.encode([t]) for t in texts])
        with ThreadPoolExecutor(self._workers, thread_name_prefix="embed") as pool:
            return np.concatenate(list(pool.map(lambda t: self.encode([t]), texts)))

"""Export the model to an optimized ONNX graph and prove it matches torch (child process).

Run as `python -m memory.adapters.embeddings.onnx_export MODEL_DIR TARGET_DIR`. Writes
TARGET_DIR/model.onnx and export.json only when every probe vector agrees with
sentence-transformers on torch (cosine >= MIN_COSINE); otherwise exits non-zero.

`python -m memory.adapters.embeddings.onnx_export --int8 MODEL_DIR TARGET_DIR` adds
TARGET_DIR/model-int8.onnx: the exported graph with its weights quantized to int8 (one
scale per output channel, activations quantized on the fly), kept only when every probe
vector stays within MIN_INT8_COSINE of the float graph's.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

from memory.adapters.embeddings.onnx_encoder import GRAPH_NAME, QUANTIZED_NAME, OnnxEncoder
from memory.adapters.embeddings.packaged_model import NATIVE_MAX_SEQ_LENGTH, offline_environment

OPSET = 17
MIN_COSINE = 0.999
# Measured on 400 LoCoMo turns: int8 vectors agree with float ones at cosine 0.99 on
# average, 0.977 at worst (docs/benchmarks.md); a broken quantization lands far below this.
MIN_INT8_COSINE = 0.95
PROBES = (
    "",
    "retry policy",
    "How does the payments service retry failed webhooks?",
    "- ALPHA-142: src/memory/adapters/sqlite/store.py fails with ConnectionResetError "
    "after 30s; fixed by exponential backoff with jitter (see runbook).",
    " ".join(["The nightly backup job copies the PostgreSQL WAL to cold storage."] * 40),
)


def export_graph(model_dir: Path, out: Path) -> None:
    """Trace the transformer (eager attention) to ONNX, then fuse it for onnxruntime."""
    import torch
    from onnxruntime.transformers.optimizer import optimize_model
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True,
                                      attn_implementation="eager").eval()

    class Hidden(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    dummy = tuple(torch.ones(2, 16, dtype=torch.long) for _ in names)
    axes = {name: {0: "batch", 1: "tokens"} for name in names + ["last_hidden_state"]}
    raw = out.with_name("raw.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Hidden(model), dummy, str(raw), input_names=names,
                          output_names=["last_hidden_state"], dynamic_axes=axes,
                          opset_version=OPSET, dynamo=False)
    config = model.config
    fused = optimize_model(str(raw), model_type="bert", num_heads=config.num_attention_heads,
                           hidden_size=config.hidden_size, opt_level=1, use_gpu=False)
    fused.save_model_to_file(str(out))
    raw.unlink()


def parity(model_dir: Path, graph: Path) -> float:
    """Smallest cosine between torch and ONNX vectors over the probe texts."""
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    reference.max_seq_length = NATIVE_MAX_SEQ_LENGTH
    expected = reference.encode(list(PROBES), normalize_embeddings=True,
                                convert_to_numpy=True, show_progress_bar=False)
    got = OnnxEncoder.open(model_dir, graph, NATIVE_MAX_SEQ_LENGTH, threads=1).encode(list(PROBES))
    return float((expected * got).sum(axis=1).min())


def quantize(graph: Path, out: Path) -> None:
    """Dynamic int8 quantization of the float graph's matrix weights, per output channel."""
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.getLogger().setLevel(logging.ERROR)  # its pre-processing advice is noise here
    quantize_dynamic(str(graph), str(out), weight_type=QuantType.QInt8, per_channel=True,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})


def int8_parity(model_dir: Path, graph: Path, quantized: Path) -> float:
    """Smallest cosine between the float graph's and the int8 graph's probe vectors."""
    texts = list(PROBES)
    a = OnnxEncoder.open(model_dir, graph, NATIVE_MAX_SEQ_LENGTH, threads=1).encode(texts)
    b = OnnxEncoder.open(model_dir, quantized, NATIVE_MAX_SEQ_LENGTH, threads=1).encode(texts)
    return float((a * b).sum(axis=1).min())


def main_int8(model_dir: Path, target: Path) -> int:
    """Write target/model-int8.onnx from target/model.onnx, atomically, once it is checked."""
    offline_environment()
    work = Path(tempfile.mkdtemp(prefix=".int8-", dir=target))
    try:
        quantize(target / GRAPH_NAME, work / QUANTIZED_NAME)
        cosine = int8_parity(model_dir, target / GRAPH_NAME, work / QUANTIZED_NAME)
        if cosine < MIN_INT8_COSINE:
            print(f"int8 graph strays from the float graph: min cosine {cosine:.4f}",
                  file=sys.stderr)
            return 2
        report = {"source": str(target / GRAPH_NAME), "min_cosine": cosine,
                  "weights": "int8, per channel", "activations": "uint8, dynamic"}
        (target / "quantize.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
        (work / QUANTIZED_NAME).replace(target / QUANTIZED_NAME)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(model_dir: Path, target: Path) -> int:
    offline_environment()
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    try:
        export_graph(model_dir, work / GRAPH_NAME)
        cosine = parity(model_dir, work / GRAPH_NAME)
        if cosine < MIN_COSINE:
            print(f"onnx graph disagrees with torch: min cosine {cosine:.5f}", file=sys.stderr)
            return 2
        report = {"source": str(model_dir), "min_cosine": cosine, "opset": OPSET}
        (work / "export.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
        try:
            work.rename(target)
        except OSError:
            if not (target / GRAPH_NAME).is_file():
                raise  # not a lost race with another exporter: a real failure
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1] == "--int8":
        sys.exit(main_int8(Path(sys.argv[2]), Path(sys.argv[3])))
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))

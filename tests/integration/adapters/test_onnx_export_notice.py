"""The first start's ONNX export says what it does and why, on stderr, never on stdout."""

from __future__ import annotations

import logging
from pathlib import Path

from memory.adapters.embeddings import onnx_encoder
from memory.adapters.embeddings.onnx_encoder import FINGERPRINTED, GRAPH_NAME, exported_graph
from memory.entrypoints.cli_progress import notices_on_stderr


def model_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    for name in FINGERPRINTED:
        (folder / name).write_text("{}", encoding="utf-8")
    return folder


def test_the_export_says_so_on_stderr_once_and_not_when_reused(tmp_path, monkeypatch, capsys):
    exports = []

    def export(model: Path, target: Path, *flags: str) -> None:  # the child's ~30 s of work
        exports.append(flags)
        target.mkdir(parents=True, exist_ok=True)
        (target / GRAPH_NAME).write_bytes(b"graph")

    monkeypatch.setattr(onnx_encoder, "_run_export", export)
    notices_on_stderr()
    notices_on_stderr()  # a second call adds no second line
    model = model_dir(tmp_path)
    graph = exported_graph(model, tmp_path / "cache")
    said = capsys.readouterr()
    assert said.out == ""
    assert said.err.count("exporting the embedding model to ONNX once (about 30 s)") == 1
    assert str(graph.parent) in said.err and "later starts reuse it" in said.err
    assert exported_graph(model, tmp_path / "cache") == graph and len(exports) == 1
    assert capsys.readouterr().err == ""  # reused: nothing to say
    assert logging.getLogger("memory.adapters.embeddings").propagate is False

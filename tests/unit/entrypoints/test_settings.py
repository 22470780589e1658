"""Settings read from flags and the environment, with clear errors for bad values."""

from __future__ import annotations

import pytest

from memory.domain.errors import InvalidRequest
from memory.entrypoints.container import build
from memory.entrypoints.settings import PRECISION_ENV, Settings


def test_embedding_precision_defaults_to_int8_and_reaches_the_embedder(tmp_path, monkeypatch):
    monkeypatch.delenv(PRECISION_ENV, raising=False)
    settings = Settings.resolve(str(tmp_path))
    assert settings.embedding_precision == "int8"
    embedder = build(settings).gateways.embedder()
    assert embedder.precision == "int8" and embedder.model_id.endswith("+int8")


@pytest.mark.parametrize("raw, expected", [("fp32", "fp32"), (" INT8 ", "int8"), ("", "int8")])
def test_embedding_precision_from_the_environment(tmp_path, monkeypatch, raw, expected):
    monkeypatch.setenv(PRECISION_ENV, raw)
    settings = Settings.resolve(str(tmp_path))
    assert settings.embedding_precision == expected
    assert build(settings).gateways.embedder().precision == expected


def test_an_unknown_precision_is_refused_by_name(tmp_path, monkeypatch):
    monkeypatch.setenv(PRECISION_ENV, "fp16")
    with pytest.raises(InvalidRequest, match=f"{PRECISION_ENV} must be one of int8, fp32"):
        Settings.resolve(str(tmp_path))


def test_settings_offer_exactly_the_embedder_precisions():
    from memory.adapters.embeddings.sentence_transformer import PRECISIONS as EMBEDDER

    from memory.entrypoints.settings import DEFAULT_PRECISION, PRECISIONS
    assert set(PRECISIONS) == set(EMBEDDER) and DEFAULT_PRECISION in EMBEDDER


def test_the_model_cache_is_read_once_here_and_handed_to_the_container(tmp_path, monkeypatch):
    from memory.entrypoints.settings import MODEL_CACHE_ENV
    monkeypatch.setenv(MODEL_CACHE_ENV, str(tmp_path / "models"))
    settings = Settings.resolve(str(tmp_path))
    assert settings.model_cache == tmp_path / "models"
    assert build(settings).config.model_cache() == str(tmp_path / "models")


def test_the_model_cache_defaults_under_the_user_cache(tmp_path, monkeypatch):
    from memory.entrypoints.settings import MODEL_CACHE_ENV
    monkeypatch.delenv(MODEL_CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    expected = tmp_path / "cache" / "ai-memory" / "models"
    assert Settings.resolve(str(tmp_path)).model_cache == expected


@pytest.mark.parametrize("name, field", [("GRAPH_MEMORY_ENV", "graph_memory_mb"),
                                         ("GRAPH_TIMEOUT_ENV", "graph_timeout_s")])
@pytest.mark.parametrize("raw, expected", [("", None), ("0", 0), (" 2048 ", 2048)])
def test_the_graph_build_limits_from_the_environment(tmp_path, monkeypatch, name, field, raw,
                                                     expected):
    from memory.entrypoints import settings as module
    monkeypatch.setenv(getattr(module, name), raw)
    settings = Settings.resolve(str(tmp_path))
    assert getattr(settings, field) == expected
    assert getattr(build(settings).config, field)() == expected


@pytest.mark.parametrize("raw", ["4g", "-1", "1.5"])
def test_a_graph_memory_cap_that_is_no_number_is_refused_by_name(tmp_path, monkeypatch, raw):
    from memory.entrypoints.settings import GRAPH_MEMORY_ENV
    monkeypatch.setenv(GRAPH_MEMORY_ENV, raw)
    with pytest.raises(InvalidRequest, match=f"{GRAPH_MEMORY_ENV} must be a whole number"):
        Settings.resolve(str(tmp_path))


def test_a_graph_timeout_that_is_no_number_is_refused_by_name(tmp_path, monkeypatch):
    from memory.entrypoints.settings import GRAPH_TIMEOUT_ENV
    monkeypatch.setenv(GRAPH_TIMEOUT_ENV, "10m")
    with pytest.raises(InvalidRequest, match=f"{GRAPH_TIMEOUT_ENV} must be a whole number"):
        Settings.resolve(str(tmp_path))

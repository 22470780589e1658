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

"""Health words the model's state as what the user gets: ready, loads on first use, off and why."""

import pytest

from memory.domain.model_state import EmbedderState
from memory.entrypoints.status_presenters import model_words


@pytest.mark.parametrize(("state", "says", "never"), [
    (EmbedderState.READY, "semantic search on", "off"),
    (EmbedderState.NOT_LOADED, "loads on first use", "off"),
    (EmbedderState.LOADING, "lexical only", "not-loaded"),
])
def test_a_model_that_is_merely_not_loaded_yet_is_not_called_off(state, says, never):
    words = model_words(state, None)
    assert says in words and never not in words


def test_a_failed_model_says_off_and_why():
    words = model_words(EmbedderState.FAILED, "no cache_dir for the int8 graph")
    assert words.startswith("off (no cache_dir for the int8 graph)") and "lexical only" in words

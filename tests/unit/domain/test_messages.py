"""A message keeps the steps it asks for as Actions, through composition and redaction, so
each edge can name them in its own words."""

import json
import pickle

from memory.domain.messages import TOOL_WORDS, Action, Message
from memory.domain.redacted import redacted

COMMANDS = {a: f"<{a.value}>" for a in Action}


def test_a_message_reads_in_tool_words_and_keeps_its_actions():
    m = Message("run ", Action.REFRESH, " to build it")
    assert m == "run memory_refresh to build it" and isinstance(m, str)
    assert m.actions == (Action.REFRESH,)
    assert m.worded(COMMANDS) == "run <refresh> to build it"
    assert json.dumps([m]) == '["run memory_refresh to build it"]'


def test_messages_inside_a_message_keep_their_actions_in_order():
    inner = Message("run ", Action.REFRESH_FULL)
    outer = Message("stale: ", inner, "; or ", Action.EDIT, " the note")
    assert outer.actions == (Action.REFRESH_FULL, Action.EDIT)
    assert outer == "stale: run memory_refresh with mode 'full'; or memory_edit the note"
    assert outer.worded(COMMANDS) == "stale: run <refresh-full>; or <edit> the note"


def test_text_that_looks_like_an_action_stays_text():
    m = Message("the note refresh.md names memory_search; ", Action.SEARCH)
    assert m.worded(COMMANDS) == "the note refresh.md names memory_search; <search>"


def test_every_action_has_tool_words():
    assert set(TOOL_WORDS) == set(Action)
    assert TOOL_WORDS[Action.ALLOW_DUPLICATE] == "allow_duplicate=true"


def test_redaction_hides_a_secret_in_a_message_and_keeps_its_actions():
    m = Message("could not index notes/a.md (token ghp_" + "a1B2" * 9 + "); run ",
                Action.REFRESH)
    hidden = redacted(m)
    assert "ghp_" not in hidden and "a1B2a1B2" not in hidden
    assert isinstance(hidden, Message) and hidden.actions == (Action.REFRESH,)
    assert hidden.worded(COMMANDS).endswith("; run <refresh>")


def test_a_message_survives_a_copy_between_processes():
    m = Message("run ", Action.REFRESH)
    back = pickle.loads(pickle.dumps(m))
    assert back == m and back.worded(COMMANDS) == "run <refresh>"

"""A batch of raw records is admitted whole or refused naming the first bad record; what is
admitted has its private text removed and its secrets redacted, and one digest per content."""

from __future__ import annotations

import pytest

from memory.domain.artifacts import (PRIVATE_MARKER, BatchRefused, Change, Conversation,
                                     Message, RawRecord, change_of, scope_change, validate_batch,
                                     without_private)

GOOD = {"conversation": "c-42", "session": "s3", "seq": 17,
        "time": "2023-05-08T13:56:00+00:00", "speaker": "Caroline", "role": "user",
        "project": "apollo", "text": "The migration needs --lock-timeout 5s."}


def records(*fields: dict) -> list[RawRecord]:
    return [RawRecord(where=f"chat.jsonl:{n}", fields=f) for n, f in enumerate(fields, 1)]


def test_a_good_batch_keeps_its_conversation_scope_and_messages_in_order():
    batch = validate_batch("team", records(GOOD, {**GOOD, "seq": 18, "text": "And a retry."}))
    assert batch.conversations == (Conversation(source="team", conversation="c-42",
                                                project="apollo"),)
    assert [(m.seq, m.speaker, m.session) for m in batch.messages] == [(17, "Caroline", "s3"),
                                                                        (18, "Caroline", "s3")]
    assert batch.positions[("team", "c-42", 18)] == "chat.jsonl:2"


@pytest.mark.parametrize("bad, why", [
    ({k: v for k, v in GOOD.items() if k != "conversation"}, "missing `conversation`"),
    ({k: v for k, v in GOOD.items() if k != "seq"}, "missing `seq`"),
    ({k: v for k, v in GOOD.items() if k != "text"}, "missing `text`"),
    ({**GOOD, "seq": "17"}, "`seq` must be a whole number"),
    ({**GOOD, "seq": 17.5}, "`seq` must be a whole number"),
    ({**GOOD, "seq": True}, "`seq` must be a whole number"),
    ({**GOOD, "seq": -1}, "`seq` must be a whole number"),
    ({**GOOD, "seq": 2**64}, "`seq` must be a whole number"),
    ({**GOOD, "time": "8 May 2023"}, "`time`"),
    ({**GOOD, "time": "2023-05-08T13:56:00"}, "with an offset"),
    ({**GOOD, "text": 5}, "`text` must be a string"),
    ({**GOOD, "speaker": ["x"]}, "`speaker` must be a string"),
    ({**GOOD, "conversation": "  "}, "`conversation` must be a non-empty string"),
])
def test_one_bad_record_refuses_the_batch_naming_its_line_and_why(bad, why):
    with pytest.raises(BatchRefused) as refused:
        validate_batch("team", records(GOOD, {**GOOD, "seq": 18}, bad))
    assert refused.value.where == "chat.jsonl:3"
    assert why in refused.value.why and "nothing stored" in str(refused.value)


def test_a_seq_repeated_with_other_content_is_refused_and_with_the_same_is_kept_once():
    with pytest.raises(BatchRefused) as refused:
        validate_batch("team", records(GOOD, {**GOOD, "text": "Something else."}))
    assert refused.value.where == "chat.jsonl:2" and "chat.jsonl:1" in refused.value.why
    batch = validate_batch("team", records(GOOD, dict(GOOD)))
    assert len(batch.messages) == 1 and batch.repeated == 1


def test_the_same_seq_in_two_conversations_is_two_messages():
    batch = validate_batch("team", records(GOOD, {**GOOD, "conversation": "c-43"}))
    assert len(batch.messages) == 2 and len(batch.conversations) == 2


def test_a_conversation_scoped_two_ways_in_one_batch_is_refused():
    with pytest.raises(BatchRefused) as refused:
        validate_batch("team", records(GOOD, {**GOOD, "seq": 18, "project": "hermes"}))
    assert refused.value.where == "chat.jsonl:2" and "apollo" in refused.value.why


def test_private_text_is_removed_and_secrets_are_redacted_before_anything_else():
    text = ("Use <private>my home address is 12 Elm St</private> and the token "
            "ghp_" + "Ab1" * 12 + " <PRIVATE>diary\nlines</PRIVATE> done <private>unclosed tail")
    message = validate_batch("team", records({**GOOD, "text": text})).messages[0]
    assert "Elm" not in message.text and "diary" not in message.text
    assert "unclosed" not in message.text and "Ab1Ab1" not in message.text
    assert message.text.count(PRIVATE_MARKER) == 3 and "[REDACTED:" in message.text


@pytest.mark.parametrize("text, kept", [
    ("a <private>x</private> b", f"a {PRIVATE_MARKER} b"),
    ("a <private>x <private>y</private> z</private> b", f"a {PRIVATE_MARKER} b"),
    ("a </private> b <Private >x", f"a  b {PRIVATE_MARKER}"),
    ("no tags", "no tags"),
])
def test_private_tags_hide_more_on_a_mistake_never_less(text, kept):
    assert without_private(text) == kept


def test_a_secret_in_a_speaker_or_session_is_redacted_too():
    message = validate_batch("team", records({**GOOD, "speaker": "ghp_" + "Ab1" * 12,
                                              "session": "password: Zebra8Quokka3Walrus"})
                             ).messages[0]
    assert "Ab1Ab1" not in message.speaker and "Zebra8" not in message.session


def test_an_identifier_holding_a_secret_is_refused_not_stored_with_a_marker():
    with pytest.raises(BatchRefused) as refused:
        validate_batch("team", records({**GOOD, "conversation": "ghp_" + "Ab1" * 12}))
    assert "secret" in refused.value.why


def test_the_digest_follows_the_content_and_nothing_else():
    one = Message(source="team", conversation="c-42", seq=1, text="hello")
    assert one.digest == Message(source="team", conversation="c-42", seq=1, text="hello").digest
    assert one.digest != Message(source="team", conversation="c-42", seq=1, text="hello!").digest
    assert one.digest != Message(source="team", conversation="c-42", seq=1, text="hello",
                                 speaker="Mel").digest
    assert len(one.digest) == 64


def test_a_stored_key_with_other_content_is_refused_unless_the_file_is_revised():
    message = Message(source="team", conversation="c-42", seq=1, text="hello")
    assert change_of(None, message, False, "f:1") is Change.NEW
    assert change_of(message.digest, message, False, "f:1") is Change.UNCHANGED
    assert change_of("0" * 64, message, True, "f:1") is Change.REVISED
    with pytest.raises(BatchRefused, match="already stored with different content"):
        change_of("0" * 64, message, False, "f:1")
    stored = Conversation(source="team", conversation="c-42", project="apollo")
    assert scope_change(stored, stored, False, "f:1") is Change.UNCHANGED
    with pytest.raises(BatchRefused, match="apollo"):
        scope_change(stored, Conversation(source="team", conversation="c-42"), False, "f:1")

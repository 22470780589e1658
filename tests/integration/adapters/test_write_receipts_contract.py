"""One contract for every WriteReceipts: the newest receipt that returned a hash, kept across
instances on one state folder (a CLI edit after a CLI edit); foreign lines are no receipt."""

import pytest

from memory.adapters.inmemory.write_receipts import InMemoryWriteReceipts
from memory.adapters.statefiles import JsonlWriteReceipts
from memory.domain.new_note import Author
from memory.domain.write_receipts import WriteReceipt

CLI, AGENT = Author.named("ai-memory-cli", source="cli"), Author.named("claude-code")


def receipt(base, made, author=CLI, path="Decisions/a.md"):
    return WriteReceipt.of(path=path, base_hash=base, content_hash=made, author=author)


@pytest.fixture(params=["in-memory", "jsonl"])
def receipts(request, tmp_path):
    return InMemoryWriteReceipts() if request.param == "in-memory" else \
        JsonlWriteReceipts(tmp_path / "state")


def test_made_answers_the_newest_receipt_of_a_hash(receipts):
    assert receipts.made("a" * 64) is None
    receipts.record(receipt(None, "a" * 64))
    receipts.record(receipt("a" * 64, "b" * 64))
    receipts.record(receipt("c" * 64, "b" * 64, author=AGENT))  # the same bytes again
    assert receipts.made("a" * 64) == receipt(None, "a" * 64)
    newest = receipts.made("b" * 64)
    assert newest == receipt("c" * 64, "b" * 64, author=AGENT) and newest.by(AGENT)
    assert not newest.by(CLI) and receipts.made("d" * 64) is None


def test_another_process_on_the_state_folder_reads_them(tmp_path):
    JsonlWriteReceipts(tmp_path / "state").record(receipt("a" * 64, "b" * 64))
    assert JsonlWriteReceipts(tmp_path / "state").made("b" * 64) == receipt("a" * 64, "b" * 64)


def test_a_torn_or_foreign_line_is_no_receipt(tmp_path):
    receipts = JsonlWriteReceipts(tmp_path / "state")
    receipts.record(receipt("a" * 64, "b" * 64))
    with receipts.path.open("a") as f:
        f.write('{"content_hash": "' + "b" * 64 + '", "author": 3}\n{"content_hash": "b')
    assert receipts.made("b" * 64) == receipt("a" * 64, "b" * 64)
    receipts.record(receipt("b" * 64, "c" * 64))
    assert receipts.made("c" * 64) == receipt("b" * 64, "c" * 64)

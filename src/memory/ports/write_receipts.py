"""WriteReceipts: the hashes writes and edits returned, and to whom, for conflict messages."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from memory.domain.write_receipts import WriteReceipt


@runtime_checkable
class WriteReceipts(Protocol):
    """Kept across processes (a CLI edit after a CLI edit); losing one only makes a later
    conflict message less specific. Any call may raise StoreError."""

    def record(self, receipt: WriteReceipt) -> None:
        """Keep the receipt of one write or edit that changed a note."""

    def made(self, content_hash: str) -> WriteReceipt | None:
        """The newest receipt whose write or edit returned this content_hash, or None."""

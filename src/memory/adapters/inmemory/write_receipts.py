"""InMemoryWriteReceipts: the receipts of one process, newest last (tests, single runs)."""

from __future__ import annotations

from memory.domain.write_receipts import WriteReceipt
from memory.ports.write_receipts import WriteReceipts


class InMemoryWriteReceipts(WriteReceipts):
    def __init__(self) -> None:
        self.receipts: list[WriteReceipt] = []

    def record(self, receipt: WriteReceipt) -> None:
        self.receipts.append(receipt)

    def made(self, content_hash: str) -> WriteReceipt | None:
        return next((r for r in reversed(self.receipts) if r.content_hash == content_hash),
                    None)

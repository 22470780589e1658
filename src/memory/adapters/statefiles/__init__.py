"""Small file-backed adapters kept in the state directory: lock, journals, clock, tokens."""

from memory.adapters.statefiles.clock import SystemClock
from memory.adapters.statefiles.content_key_file import FileContentKeys
from memory.adapters.statefiles.journal import JsonlFeedbackLog, JsonlRefreshHistory
from memory.adapters.statefiles.progress_file import JsonRefreshProgress
from memory.adapters.statefiles.refresh_lock import FileRefreshLock
from memory.adapters.statefiles.state_dir import ensure_state_dir
from memory.adapters.statefiles.token_store import JsonTokenStore
from memory.adapters.statefiles.write_receipts_file import JsonlWriteReceipts

__all__ = ["FileContentKeys", "FileRefreshLock", "JsonRefreshProgress", "JsonTokenStore", "JsonlFeedbackLog",
           "JsonlRefreshHistory", "JsonlWriteReceipts",
           "SystemClock", "ensure_state_dir"]

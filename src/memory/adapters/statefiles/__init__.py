"""Small file-backed adapters kept in the state directory: lock, journals, clock."""

from memory.adapters.statefiles.clock import SystemClock
from memory.adapters.statefiles.journal import JsonlFeedbackLog, JsonlRefreshHistory
from memory.adapters.statefiles.progress_file import JsonRefreshProgress
from memory.adapters.statefiles.refresh_lock import FileRefreshLock
from memory.adapters.statefiles.state_dir import ensure_state_dir

__all__ = ["FileRefreshLock", "JsonRefreshProgress", "JsonlFeedbackLog", "JsonlRefreshHistory",
           "SystemClock", "ensure_state_dir"]

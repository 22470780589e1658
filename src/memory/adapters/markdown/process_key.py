"""The content key of a note source or writer built without one: this process's own.

The composition root always hands both the memory's stored key; this one keeps hashes
keyed (never a plain sha256 of a file) where a test or a tool builds an adapter alone.
"""

from __future__ import annotations

import secrets

from memory.domain.note_text import MIN_KEY_BYTES, ContentKey

PROCESS_KEY = ContentKey(secrets.token_bytes(MIN_KEY_BYTES))

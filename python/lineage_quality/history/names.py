"""Names as the history and lineage stores keep them: whatever an event brings, escaped so every
database takes it and bounded in length, two long names never sharing a key."""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 512  # a dataset name or rule id longer than this is cut and ends in a hash
MAX_RUN_ID = 128  # the receiver refuses run ids over 64 characters; in-driver ones are UUIDs
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")  # NUL (PostgreSQL refuses it), lone surrogates


def key(text: str, limit: int = MAX_NAME) -> str:
    """`text` as the store keeps it: NUL and lone surrogates escaped (`\\x00`, `\\ud800`), and
    past `limit` characters cut, ending in `#` and 16 hex digits of the whole text's SHA-256."""
    if _UNSTORABLE.search(text):
        text = _UNSTORABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    if len(text) <= limit:
        return text
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return f"{text[: limit - 17]}#{digest}"


def cut(text: str | None, limit: int) -> str | None:
    """`text` escaped as `key` escapes it, cut at `limit` characters (no hash)."""
    return None if text is None else key(text, 2**62)[:limit]

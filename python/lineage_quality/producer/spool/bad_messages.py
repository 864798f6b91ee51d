"""Bad messages: Kafka messages that were not events (not UTF-8, not JSON, too large, no value:
kafka/consumer.py), each kept as a bounded record beside the dead letters -- never among them.

A bad message can be anything a producer wrote to the topic: 50 MB of binary. So it is not kept
whole: its first `kafka_bad_message_keep_bytes` bytes (4 KiB) as they are (a BLOB, no escaping),
its full size and SHA-256, where it was (topic, partition, offset) and why it is not an event.
The message itself stays in the topic for as long as the topic keeps it. At most
`kafka_bad_messages_max` records (1,000: 4 MiB of heads) are kept; past it the oldest bad
messages expire -- never a dead letter, which is an event a sink refused and exists nowhere
else (dead_letters.py has its own bounds).

Their ids come from the events' AUTOINCREMENT sequence, as the dead letters' do, so that
`lineage-quality dead-letters` names both in one id space.
"""

from __future__ import annotations

import base64
import hashlib
import time
from typing import Any

import attrs

from lineage_quality.producer.settings import DEFAULTS, Settings
from lineage_quality.producer.spool.store import Store

_SCHEMA = """
CREATE TABLE IF NOT EXISTS bad_messages (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    offset INTEGER NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    head BLOB NOT NULL,
    reason TEXT NOT NULL,
    received REAL NOT NULL
)
"""
MAX_REASON = 2000  # characters of the reason kept


@attrs.frozen
class BadMessage:
    id: int
    source: str  # kafka:TOPIC/PARTITION
    offset: int
    size: int  # bytes of the whole message (0: no value)
    sha256: str  # of the whole message
    head: bytes  # its first bytes, at most the keep bound
    reason: str
    received: float  # epoch seconds

    @property
    def where(self) -> str:
        """`kafka:TOPIC/PARTITION@OFFSET`."""
        return f"{self.source}@{self.offset}"

    def shown(self) -> dict[str, Any]:
        """As `dead-letters show` prints it: the head as text when it is UTF-8 (a character cut
        at the end of the head aside), else in base64."""
        try:
            text: str | None = self.head.decode("utf-8")
        except UnicodeDecodeError as exc:
            cut = len(self.head) < self.size and exc.reason == "unexpected end of data"
            text = self.head[: exc.start].decode("utf-8") if cut else None
        if text is not None:
            head = {"head": text}
        else:
            head = {"headBase64": base64.b64encode(self.head).decode("ascii")}
        return {
            "id": self.id,
            "message": self.where,
            "reason": self.reason,
            "size": self.size,
            "sha256": self.sha256,
            "kept": len(self.head),
            **head,
        }


class BadMessages:
    """The bad messages of one spool (its store), within `settings`' `kafka_bad_messages_max`,
    each kept to `kafka_bad_message_keep_bytes`."""

    def __init__(self, store: Store, settings: Settings = DEFAULTS) -> None:
        self.store = store
        self.keep = settings.kafka.bad_message_keep_bytes
        self.max_count = settings.kafka.bad_messages_max
        store.db.execute(_SCHEMA)
        with store.db_lock:
            self.count = int(store.db.execute("SELECT count(*) FROM bad_messages").fetchone()[0])

    def record(self, raw: bytes | None, source: str, offset: int, reason: str) -> int:
        """Keep a record of the bad message `raw` (None: no value) read at `source`@`offset`, in
        one transaction that also expires the oldest records past the bound; how many
        expired."""
        data = raw or b""
        head, digest = data[: self.keep], hashlib.sha256(data).hexdigest()
        store = self.store
        with store.db_lock:
            expired: list[int] = []

            def add() -> None:
                expired.clear()
                now = time.time()
                # an id from the events' sequence (inserted and deleted at once)
                cur = store.write(
                    "INSERT INTO events (body, received, lane, kind, size) VALUES (?, ?, ?, ?, ?)",
                    ("", now, source, "event", 0),
                )
                new_id = int(cur.lastrowid or 0)
                store.write("DELETE FROM events WHERE id = ?", (new_id,))
                store.write(
                    "INSERT INTO bad_messages "
                    "(id, source, offset, size, sha256, head, reason, received) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (new_id, source, offset, len(data), digest, head, reason[:MAX_REASON], now),
                )
                over = self.count + 1 - self.max_count if self.max_count else 0
                if over > 0:
                    rows = store.db.execute(
                        "SELECT id FROM bad_messages ORDER BY id LIMIT ?", (over,)
                    ).fetchall()
                    expired.extend(int(r[0]) for r in rows)
                    for old_id in expired:
                        store.write("DELETE FROM bad_messages WHERE id = ?", (old_id,))

            store.transaction(add)
            self.count += 1 - len(expired)
            return len(expired)

    def entries(self) -> list[BadMessage]:
        with self.store.db_lock:
            rows = self.store.db.execute(
                "SELECT id, source, offset, size, sha256, head, reason, received "
                "FROM bad_messages ORDER BY id"
            ).fetchall()
        return [
            BadMessage(int(r[0]), r[1], int(r[2]), int(r[3]), r[4], bytes(r[5]), r[6], float(r[7]))
            for r in rows
        ]

    def purge(self, ids: list[int] | None = None) -> int:
        """Delete the given records (all when None); how many were deleted."""
        with self.store.db_lock:
            if ids is None:
                cur = self.store.write("DELETE FROM bad_messages", ())
            else:
                marks = ",".join("?" for _ in ids)
                sql = f"DELETE FROM bad_messages WHERE id IN ({marks})"
                cur = self.store.write(sql, tuple(ids))
            self.count = int(
                self.store.db.execute("SELECT count(*) FROM bad_messages").fetchone()[0]
            )
        return int(cur.rowcount)

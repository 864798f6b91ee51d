"""Where a dataset version's metric states are kept (engine/states.py): in the history database,
beside the measured values, so that every producer sharing it (PostgreSQL) can merge the next
append into them.

One row per (dataset, version): `version` is what names the version exactly (a Delta version,
an Iceberg snapshot, or a digest of the plain files that made it: path, size, modification
time). Bounded: the newest `PER_DATASET` versions of a dataset, `MAX_ROWS` rows in all (the
oldest go), states past `MAX_STATE_BYTES` are not kept (a version without a state is scanned
whole next time, never merged with a guess), and rows past the history's retention expire.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from lineage_quality.engine.states import States
from lineage_quality.history.database import Statements
from lineage_quality.history.names import key
from lineage_quality.history.store import SqlHistory

PER_DATASET = 4  # an append merges into the version just before it: a few are enough
MAX_ROWS = 100_000
MAX_STATE_BYTES = 4 * 1024 * 1024

_TABLE = """CREATE TABLE IF NOT EXISTS lq_states (
    dataset TEXT NOT NULL,
    version TEXT NOT NULL,
    state TEXT NOT NULL,
    run_id TEXT NOT NULL,
    recorded_ms BIGINT NOT NULL,
    PRIMARY KEY (dataset, version)
)"""
_INDEX = "CREATE INDEX IF NOT EXISTS lq_states_age ON lq_states (recorded_ms)"
_UPSERT = (
    "INSERT INTO lq_states (dataset, version, state, run_id, recorded_ms) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (dataset, version) DO UPDATE SET state = excluded.state, "
    "run_id = excluded.run_id, recorded_ms = excluded.recorded_ms"
)
_KEEP_NEWEST = (
    "DELETE FROM lq_states WHERE dataset = ? AND version NOT IN (SELECT version FROM lq_states "
    "WHERE dataset = ? ORDER BY recorded_ms DESC LIMIT ?)"
)
_EXPIRE_OLDEST = (
    "DELETE FROM lq_states WHERE (dataset, version) IN (SELECT dataset, version FROM lq_states "
    "ORDER BY recorded_ms LIMIT ?)"
)


class StateStore(Statements):
    """The states table on the history store's own connection (one lock, one transaction at a
    time with its writes)."""

    def __init__(self, history: SqlHistory) -> None:
        self._db = history._db
        self._lock: threading.Lock = history._lock
        self.placeholder = history.placeholder
        self._retention_ms = int(history.bounds.retention_days * 86_400_000)
        self._last_ms = 0
        with self._transaction() as cur:
            cur.execute(_TABLE)
            cur.execute(_INDEX)

    def get(self, dataset: str, version: str) -> tuple[States, str] | None:
        """The states kept for `version` of `dataset` and the run that kept them, or None."""
        with self._reading() as cur:
            cur.execute(
                self._sql("SELECT state, run_id FROM lq_states WHERE dataset = ? AND version = ?"),
                (key(dataset), key(version)),
            )
            row: Any = cur.fetchone()
        if row is None:
            return None
        found = States.from_json(str(row[0]))
        return None if found is None else (found, str(row[1]))

    def put(self, dataset: str, version: str, states: States, run_id: str) -> bool:
        """Keep `states` for `version` of `dataset`; False when too large to keep."""
        text = states.to_json()
        if len(text) > MAX_STATE_BYTES:
            return False
        with self._lock:  # strictly increasing here: the newest is the one put last
            now = self._last_ms = max(int(time.time() * 1000), self._last_ms + 1)
        name = key(dataset)
        with self._transaction() as cur:
            cur.execute(self._sql(_UPSERT), (name, key(version), text, key(run_id, 256), now))
            cur.execute(self._sql(_KEEP_NEWEST), (name, name, PER_DATASET))
            cur.execute(
                self._sql("DELETE FROM lq_states WHERE recorded_ms < ?"),
                (now - self._retention_ms,),
            )
            cur.execute("SELECT COUNT(*) FROM lq_states")
            count = int(cur.fetchone()[0])
            if count > MAX_ROWS:
                cur.execute(self._sql(_EXPIRE_OLDEST), (count - MAX_ROWS + MAX_ROWS // 100,))
        return True

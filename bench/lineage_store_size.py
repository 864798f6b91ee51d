"""CPU per kept COMPLETE's lineage (`LineageStore.record`) on a SQLite store already holding
ROWS rows per lineage table: what the bound check costs as the store fills.

    PYTHONPATH=python .venv/bin/python bench/lineage_store_size.py ROWS [EVENTS]

The tables are filled with plain INSERTs (the store's triggers count them), then EVENTS
COMPLETEs (one input, one output, a run each) are kept one by one, timed with the process's CPU
clock; every `check_every`-th (64) checks the bounds. Compare two checkouts with their own
PYTHONPATH.
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lineage_quality.lineage import observe, open_lineage

_STATE = '{"failures": [], "marks": []}'


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + ".000Z"


def _event(i: int, now: int) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": _iso(now - 1000),
        "run": {"runId": f"run-{i}"},
        "job": {"namespace": "spark", "name": f"job-{i % 50}"},
        "inputs": [{"namespace": "file", "name": f"/lake/d-{i % 5000}"}],
        "outputs": [{"namespace": "file", "name": f"/lake/o-{i % 300}"}],
    }


def main() -> None:
    rows = int(sys.argv[1])
    events = int(sys.argv[2]) if len(sys.argv) > 2 else 3200
    now = int(time.time() * 1000)
    where = Path(tempfile.mkdtemp()) / "history.db"
    open_lineage(where).close()  # the tables, their totals and triggers
    db = sqlite3.connect(where)
    db.executemany(
        "INSERT INTO lq_lineage_writes VALUES (?, ?, ?, NULL, 1, ?, NULL, ?, ?)",
        (
            (
                f"file:/lake/d-{i % 5000}",
                f"fill-{i}",
                now - 3_600_000 + i % 3_000_000,
                _STATE,
                now,
                150,
            )
            for i in range(rows)
        ),
    )
    db.executemany(
        "INSERT INTO lq_lineage_edges VALUES (?, 'inputs', ?, 'spark/job', NULL, ?, NULL, ?, ?)",
        (
            (f"fill-{i}", f"file:/lake/d-{i % 5000}", now - 3_600_000 + i % 3_000_000, now, 120)
            for i in range(rows)
        ),
    )
    db.commit()
    db.close()
    store = open_lineage(where)
    observed = [observe(_event(i, now), {}, store.written) for i in range(events)]
    store.record(observe(_event(-1, now), {}, store.written))  # the first checks the bounds
    start = time.process_time()
    for o in observed:
        store.record(o)
    spent = time.process_time() - start
    print(
        f"rows per table {rows:>7}: {spent / events * 1e6:7.1f} us CPU per record "
        f"({events} records, {events // 64} bound checks)"
    )
    store.close()


if __name__ == "__main__":
    main()

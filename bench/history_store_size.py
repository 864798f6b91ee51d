"""CPU per evaluation's append to the history (`SqlHistory.append`, 10 rules) on a SQLite store
already holding POINTS points: what the bound check costs as the store fills.

    PYTHONPATH=python .venv/bin/python bench/history_store_size.py POINTS [APPENDS]

The store is filled through `append` in batches of 10,000 (below the default bound of 1,000,000
points, so no expiry runs while timing), then APPENDS appends of 10 points each are timed with
the process's CPU clock. Compare two checkouts with their own PYTHONPATH.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from lineage_quality.history import Measured, open_history


def main() -> None:
    points = int(sys.argv[1])
    appends = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    now = int(time.time() * 1000)
    store = open_history(Path(tempfile.mkdtemp()) / "history.db")
    batch: list[Measured] = []
    for i in range(points):
        dataset, rule = f"file:/lake/d-{i % 5000}", f"rule-{i % 10}"
        batch.append(Measured(dataset, rule, f"run-{i}", "rowCount", 1.0, "PASSED", now - i))
        if len(batch) == 10_000:
            store.append(batch)
            batch = []
    if batch:
        store.append(batch)
    cpu, wall = time.process_time(), time.perf_counter()
    for j in range(appends):
        rows = [
            Measured(f"file:/lake/x-{j}", f"rule-{k}", f"r-{j}", "rowCount", 1.0, "PASSED", now)
            for k in range(10)
        ]
        store.append(rows)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    store.close()
    print(
        f"{points:,} points: {cpu / appends * 1000:.2f} ms CPU, {wall / appends * 1000:.2f} ms "
        f"wall per append of 10"
    )


if __name__ == "__main__":
    main()

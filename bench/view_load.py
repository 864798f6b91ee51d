"""The quality view's page loads on a large store (issue 53): 1,000 datasets x 100 runs, kept
through the stores' own API (`LineageStore.record` of what `observe` makes of each COMPLETE,
`SqlHistory.append` of each run's values: two rules per dataset), served by the receiver as
`lineage-quality view` serves it; the median time of a whole HTTP GET of the datasets list
(first page, a search, a health filter, a late page) and of a dataset page.

    .venv/bin/python bench/view_load.py [--datasets 1000] [--runs 100] [--store PATH] [--loads 21]

A store at --store is kept and reused (filling takes a while). Prints one JSON line per page.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from lineage_quality.engine import verdict
from lineage_quality.history.store import HistoryBounds, Measured, open_history
from lineage_quality.kinds import RuleKind
from lineage_quality.lineage import Upstream, observe
from lineage_quality.lineage.store import open_lineage
from lineage_quality.producer.receiver import Receiver
from lineage_quality.producer.settings import Settings
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.event import datasets_of
from lineage_quality.view.open import open_stores
from lineage_quality.view.routes import view_routes

PER_JOB = 10  # outputs of one run
NOT_NULL = Rule(id="id.not_null", kind=RuleKind.NULL_VALUES, columns=["id"],
                threshold=Threshold(Operator.MUST_BE, 0), name="id_not_null")  # fmt: skip
ROWS = Rule(id="rows", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0),
            name="not_empty", action="BLOCK")  # fmt: skip


def _event(job: int, run: int, at_ms: int) -> dict[str, Any]:
    stamp = datetime.datetime.fromtimestamp(at_ms / 1000, datetime.UTC).isoformat()
    outputs = [{"namespace": "file", "name": f"/lake/job{job:03d}/table{t:02d}", "facets": {}}
               for t in range(PER_JOB)]  # fmt: skip
    return {"eventType": "COMPLETE", "eventTime": stamp.replace("+00:00", "Z"),
            "run": {"runId": f"run-{job:03d}-{run:03d}"},
            "job": {"namespace": "spark", "name": f"job{job:03d}"},
            "inputs": [{"namespace": "file", "name": f"/lake/raw{job:03d}", "facets": {}}],
            "outputs": outputs}  # fmt: skip


def fill(where: Path, datasets: int, runs: int) -> None:
    lineage = open_lineage(where)
    history = open_history(where, HistoryBounds(max_points=10_000_000))
    start = int(time.time() * 1000) - (runs + 1) * 3_600_000
    began = time.perf_counter()
    for run in range(runs):
        at = start + run * 3_600_000
        for job in range(datasets // PER_JOB):
            event, run_id = _event(job, run, at), f"run-{job:03d}-{run:03d}"
            results, rows = {}, []
            for ref in (r for r in datasets_of(event) if r.role == "outputs"):
                nulls = 1 if (job + run) % 17 == 0 else 0
                judged = [verdict(NOT_NULL, nulls, 100), verdict(ROWS, 0, 100 + run)]
                results[ref] = judged
                rows += [
                    Measured(ref.key, r.rule.id, run_id, r.rule.kind.value,
                             float(r.actual or 0), r.status.value, at)
                    for r in judged
                ]  # fmt: skip
            history.append(rows)
            lineage.record(observe(event, results, lineage.written, Upstream.WARN))
        print(f"filled run {run + 1}/{runs} ({time.perf_counter() - began:.0f}s)", file=sys.stderr)
    lineage.close()
    history.close()


def median_ms(url: str, loads: int) -> float:
    times = []
    for _ in range(loads):
        began = time.perf_counter()
        with urllib.request.urlopen(url, timeout=60) as answer:
            answer.read()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--store", default="/tmp/lq-view-bench.db")
    parser.add_argument("--loads", type=int, default=21)
    args = parser.parse_args()
    where = Path(args.store)
    if not where.exists():
        fill(where, args.datasets, args.runs)
    receiver = Receiver(None, Settings.of(port=0))
    receiver.add(view_routes(open_stores(where)))
    receiver.start()
    job = min(42, args.datasets // PER_JOB - 1)
    one = f"file%3A%2Flake%2Fjob{job:03d}%2Ftable07"
    pages = {
        "datasets list": "/",
        "datasets list, search": f"/?q=job{job:03d}",
        "datasets list, unhealthy": "/?health=unhealthy",
        "datasets list, page 20": "/?page=20",
        "dataset page": f"/datasets/{one}",
        "lineage page": f"/lineage/{one}",
        "API datasets": "/api/v1/datasets",
    }
    try:
        for name, path in pages.items():
            ms = median_ms(receiver.url + path, args.loads)
            print(json.dumps({"page": name, "median_ms": round(ms, 1), "datasets": args.datasets,
                              "runs": args.runs, "loads": args.loads}))  # fmt: skip
    finally:
        receiver.stop()


if __name__ == "__main__":
    main()

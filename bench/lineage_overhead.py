"""What the lineage bookkeeping (issue 39) adds per event: `python bench/lineage_overhead.py
[--events N] [--columns C] [--prefill K] [--history PATH_OR_URL]`. No Spark.

The same `Producer.process` (serve's handling of one event: parse once, keep the lineage, mark,
enrich, serialise) on COMPLETE events shaped as the OpenLineage Spark listener writes them (a
`schema`, `symlinks` and a `columnLineage` of C columns with DIRECT and INDIRECT inputs, for a
pipeline raw -> clean -> agg whose raw fails a column rule, so clean and agg get marks), with
the lineage kept (`--upstream warn`, a SQLite history store, or PostgreSQL with `--history`) and
without (`--upstream off`), interleaved in blocks of 50 events in one sitting. The store is first
filled with K earlier runs of other datasets (its indexes as a store in use has them). Prints
one JSON line: the median and 90th percentile milliseconds per event of each, and the
difference of the medians (the figure docs/lineage.md states; the bound is 2 ms).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from lineage_quality import rawjson
from lineage_quality.engine import verdict
from lineage_quality.kinds import RuleKind
from lineage_quality.lineage import Upstream, open_lineage
from lineage_quality.lineage.keeper import LineageKeeper
from lineage_quality.producer import Producer, Spool
from lineage_quality.producer.settings import Settings
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.refs import DatasetRef

BLOCK = 50
RULE = Rule(
    id="raw.c0", kind=RuleKind.NULL_VALUES, columns=["c0"],
    threshold=Threshold(Operator.MUST_BE, 0), name="c0_not_null",
)  # fmt: skip


class NoContracts:
    """An evaluator binding nothing: every event is a COMPLETE kept along lineage only."""

    def bound(self, event: Any) -> dict[Any, Any]:
        return {}


class Discard:
    def send(self, body: str) -> None:
        pass

    def close(self) -> None:
        pass


def _field(dataset: str, column: str, kind: str) -> dict[str, Any]:
    subtype = "IDENTITY" if kind == "DIRECT" else "FILTER"
    return {"namespace": "file", "name": dataset, "field": column,
            "transformations": [{"type": kind, "subtype": subtype, "description": "",
                                 "masking": False}]}  # fmt: skip


def event(run: str, at: float, inputs: list[str], output: str, columns: int) -> str:
    lineage = None
    if inputs:
        lineage = {
            "fields": {
                f"c{i}": {"inputFields": [_field(inputs[0], f"c{i}", "DIRECT")]}
                for i in range(columns)
            },
            "dataset": [_field(inputs[0], "c1", "INDIRECT")],
        }
    table = {"namespace": "hive://m:9083", "name": f"db.{output[1:]}", "type": "TABLE"}
    facets: dict[str, Any] = {
        "schema": {"fields": [{"name": f"c{i}", "type": "string"} for i in range(columns)]},
        "symlinks": {"identifiers": [table]},
    }
    if lineage is not None:
        facets["columnLineage"] = lineage
    return json.dumps(
        {
            "eventType": "COMPLETE",
            "eventTime": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(at)),
            "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/spark",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": run, "facets": {"spark_properties": {"properties": {}}}},
            "job": {"namespace": "bench", "name": f"job.{output[1:]}"},
            "inputs": [{"namespace": "file", "name": n, "facets": {}} for n in inputs],
            "outputs": [{"namespace": "file", "name": output, "facets": facets}],
        }
    )


STEPS: list[tuple[list[str], str]] = [
    ([], "/lake/raw"),
    (["/lake/raw"], "/lake/clean"),
    (["/lake/clean"], "/lake/agg"),
]


def pipeline(n: int, columns: int, start: float, prefix: str, steps: int = 0) -> list[str]:
    """n events: raw, clean, agg, raw, ... (each a new run), a second apart; from step
    `steps` on (1: clean, agg, clean, ...: every one reads the failing raw, or clean marked)."""
    cycle = STEPS[steps:]
    return [
        event(f"{prefix}-{i:08d}", start + i, *cycle[i % len(cycle)], columns) for i in range(n)
    ]


def _producer(tmp: Path, lineage: LineageKeeper | None) -> Producer:
    return Producer(
        NoContracts(),  # type: ignore[arg-type]
        Discard(),  # type: ignore[arg-type]
        Spool(tmp / f"spool-{id(lineage)}.db"),
        Settings.of(port=0),
        lineage=lineage,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--columns", type=int, default=30)
    parser.add_argument("--prefill", type=int, default=5000)
    parser.add_argument("--history", help="a postgresql:// URL (default: SQLite in a temp dir)")
    parser.add_argument(
        "--synchronous",
        choices=("full", "normal"),
        default="full",
        help="SQLite: the store's commit mode (full, as serve has it: each commit synced; "
        "normal: to see what the sync costs)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        where = args.history or str(tmp / "history.db")
        store = open_lineage(where)
        if not args.history:
            store._db.execute(f"PRAGMA synchronous={args.synchronous.upper()}")
        keeper = LineageKeeper(store, Upstream.WARN)
        now = time.time()
        started = time.perf_counter()
        for i, body in enumerate(pipeline(args.prefill, args.columns, now - 86_400, "old")):
            # other datasets (500 pipelines), earlier runs
            tree = rawjson.loads(body.replace("/lake/", f"/old{i % 500}/"))
            keeper.keep(tree, {})
        prefill_s = time.perf_counter() - started
        # raw's first write fails c0 (kept as serve keeps an evaluated write): the marks follow
        raw = rawjson.loads(event("fail-raw", now - 3600, [], "/lake/raw", args.columns))
        keeper.keep(raw, {DatasetRef("outputs", 0, "file", "/lake/raw"): [verdict(RULE, 3, 10)]})
        on, off = _producer(tmp, keeper), _producer(tmp, None)
        # the worst case: every measured event marked (clean reads the failing raw, agg clean)
        bodies = pipeline(args.events * 2, args.columns, now - 3000, "run", steps=1)
        times: dict[str, list[float]] = {"on": [], "off": []}
        marked = 0
        for block in range(0, len(bodies), 2 * BLOCK):
            chunk = bodies[block : block + 2 * BLOCK]
            for name, producer, part in (("on", on, chunk[:BLOCK]), ("off", off, chunk[BLOCK:])):
                for body in part:
                    t0 = time.perf_counter()
                    out = producer.process(body)
                    times[name].append((time.perf_counter() - t0) * 1000)
                    marked += name == "on" and "upstreamQuality" in out
        keeper.close()

    def figures(values: list[float]) -> dict[str, float]:
        q = statistics.quantiles(values, n=10)
        return {"median_ms": round(statistics.median(values), 4), "p90_ms": round(q[-1], 4)}

    result = {
        "events_each": len(times["on"]),
        "columns": args.columns,
        "prefill_runs": args.prefill,
        "prefill_ms_per_event": round(1000 * prefill_s / max(1, args.prefill), 4),
        "store": "postgresql" if args.history else f"sqlite, synchronous={args.synchronous}",
        "lineage_on": figures(times["on"]),
        "lineage_off": figures(times["off"]),
        "added_median_ms": round(
            statistics.median(times["on"]) - statistics.median(times["off"]), 4
        ),
        "marked_events": marked,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()

"""A history store for the quality view's tests (tests/unit/test_view.py, tests/browser), filled
through the producer's own code paths: each COMPLETE's lineage and health kept by the
`LineageKeeper` serve runs, each rule's value judged and kept by `judge_and_record`, from verdicts
the engine's `verdict` decides (no hand-made row). A small pipeline like the demo's:

    /lake/orders (not_null, rows>0 BLOCK) -> /lake/clean -> /lake/agg
    /lake/ok (healthy), and HOSTILE datasets whose names are markup, scripts and controls

`orders` fails its nulls rule in its latest run (3 of 10), so clean and agg are marked, and a user
accepted that run as normal (`history accept`); `empty` fails its BLOCK rule; `ok` is healthy.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from lineage_quality.cli.main import main
from lineage_quality.engine import verdict
from lineage_quality.history.judge import judge_and_record
from lineage_quality.history.store import open_history
from lineage_quality.kinds import RuleKind
from lineage_quality.lineage.keeper import LineageKeeper
from lineage_quality.lineage.policy import Upstream
from lineage_quality.lineage.store import open_lineage
from lineage_quality.results import RuleResult
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.event import datasets_of
from lineage_quality.values.refs import DatasetRef

P = TypeVar("P", Path, str)  # a SQLite file, or a postgresql:// URL
ORDERS, CLEAN, AGG = "/lake/orders", "/lake/clean", "/lake/agg"
OK, EMPTY = "/lake/ok", "/lake/empty"
HOSTILE = (
    "/lake/<script>alert(1)</script>",
    '/lake/"><img src=x onerror=alert(2)>',
    "javascript:alert(3)",
    "/lake/\x1b[31mred\x9b\u2028</title><b>x",
)
NOT_NULL = Rule(
    id="orders.customer_id.not_null",
    kind=RuleKind.NULL_VALUES,
    columns=["customer_id"],
    threshold=Threshold(Operator.MUST_BE, 0),
    name="customer_id_not_null",
)
ROWS = Rule(
    id="orders.rows",
    kind=RuleKind.ROW_COUNT,
    threshold=Threshold(Operator.GREATER_THAN, 0),
    name="not_empty",
    action="BLOCK",
)


def _direct(dataset: str, field: str) -> dict[str, Any]:
    how = [{"type": "DIRECT", "subtype": "IDENTITY", "description": ""}]
    return {"namespace": "file", "name": dataset, "field": field, "transformations": how}


def event(run: str, at_ms: int, job: str, inputs: Sequence[str],
          outputs: Mapping[str, Sequence[str]]) -> dict[str, Any]:  # fmt: skip
    """A COMPLETE of `run`; each output's columns come one to one from the first input."""

    def output(name: str, columns: Sequence[str]) -> dict[str, Any]:
        facets: dict[str, Any] = {"schema": {"fields": [{"name": c} for c in columns]}}
        if inputs:
            facets["columnLineage"] = {
                "fields": {c: {"inputFields": [_direct(inputs[0], c)]} for c in columns}
            }
        return {"namespace": "file", "name": name, "facets": facets}

    when = datetime.datetime.fromtimestamp(at_ms / 1000, datetime.UTC)
    return {
        "eventType": "COMPLETE",
        "eventTime": when.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "run": {"runId": run},
        "job": {"namespace": "spark", "name": job},
        "inputs": [{"namespace": "file", "name": n, "facets": {}} for n in inputs],
        "outputs": [output(n, c) for n, c in outputs.items()],
        "producer": "https://example.com/test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }


class Filler:
    """Keeps events and verdicts in the store at `where` as serve does."""

    def __init__(self, where: Path | str) -> None:
        self.keeper = LineageKeeper(open_lineage(where), Upstream.WARN)
        self.history = open_history(where)

    def run(self, ev: dict[str, Any], verdicts: Sequence[tuple[Rule, int, int]] = ()) -> None:
        """Judge `verdicts` (rule, measured, rows) on the event's first output, keep the
        values, then the lineage with the judged results."""
        results: dict[DatasetRef, Sequence[RuleResult]] = {}
        if verdicts:
            out = next(r for r in datasets_of(ev) if r.role == "outputs")
            at = int(datetime.datetime.fromisoformat(ev["eventTime"]).timestamp() * 1000)
            judged = [verdict(rule, n, rows) for rule, n, rows in verdicts]
            results[out] = judge_and_record(self.history, out.key, ev["run"]["runId"], at, judged)
        self.keeper.keep(ev, results)

    def close(self) -> None:
        self.keeper.store.close()
        self.history.close()


def fill(where: P, runs: int = 5, hostile: bool = True) -> P:
    """The pipeline of the module, `runs` runs of orders (the last one failing)."""
    filler = Filler(where)
    start = int(time.time() * 1000) - (runs + 2) * 3_600_000
    for i in range(runs):
        at = start + i * 3_600_000
        nulls = 3 if i == runs - 1 else 0
        filler.run(event(f"orders-{i}", at, "ingest", [], {ORDERS: ["customer_id", "amount"]}),
                   [(NOT_NULL, nulls, 10), (ROWS, 0, 10 + i)])  # fmt: skip
        filler.run(event(f"clean-{i}", at + 60_000, "clean", [ORDERS],
                         {CLEAN: ["customer_id", "amount"]}))  # fmt: skip
        filler.run(event(f"agg-{i}", at + 120_000, "agg", [CLEAN], {AGG: ["customer_id"]}))
    last = start + runs * 3_600_000
    filler.run(event("ok-1", last, "ok", [], {OK: ["customer_id"]}), [(NOT_NULL, 0, 5)])
    filler.run(event("empty-1", last, "load", [], {EMPTY: ["customer_id"]}), [(ROWS, 0, 0)])
    if hostile:
        for i, name in enumerate(HOSTILE):
            filler.run(
                event(f"<script>alert('run')</script>-{i}", last + i, '"><img onerror=x>',
                      [ORDERS], {name: ["customer_id"]}),
                [(NOT_NULL, 1, 4)],
            )  # fmt: skip
    filler.close()
    # a user accepts the failed run as normal, as `history accept` records it
    said = ["history", "accept", "--history", str(where), "--dataset", f"file:{ORDERS}",
            "--rule", NOT_NULL.id, "--run", f"orders-{runs - 1}", "--by", "ops",
            "--why", "backfill <script>alert(4)</script>"]  # fmt: skip
    assert main(said) == 0
    return where

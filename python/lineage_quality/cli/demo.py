"""`lineage-quality demo`: the whole path on an embedded default, no server needed.

Starts the producer on a free loopback port with a file sink (demo-output/events.jsonl),
spark-submits the bundled pipeline with the real OpenLineage listener attached, waits until every
event has been forwarded, and prints the verdicts found in the forwarded events.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from openlineage.client.transport.file import FileConfig, FileTransport

from lineage_quality.contracts import load_contracts
from lineage_quality.errors import ConfigError
from lineage_quality.inert import inert
from lineage_quality.producer import Forwarder, Spool
from lineage_quality.producer.settings import Settings
from lineage_quality.sparksubmit import listener_args, listener_jar, spark_submit
from lineage_quality.values.event import Event

log = logging.getLogger(__name__)


def find_root(start: Path | None = None) -> Path:
    """The source checkout holding jvm-config/ and examples/ (the demo runs from one)."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "jvm-config" / "spark-defaults.conf").exists() and (
            candidate / "examples" / "demo"
        ).is_dir():
            return candidate
    raise ConfigError("run the demo from the lineage-quality source checkout (`make demo`)")


def iter_assertions(events: Iterable[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(dataset, assertion) for every assertion of every forwarded COMPLETE event."""
    for event in map(Event.of, events):
        if not event.complete:
            continue
        for ds in event.datasets:  # inputs carry it as an input facet, outputs as a facet
            facets = ds.role_facets if ds.ref.role == "inputs" else ds.facets
            facet = facets.get("dataQualityAssertions")
            for a in (facet or {}).get("assertions", []):
                yield f"{ds.ref.role[:-1]} {ds.ref.name}", a


def format_table(rows: Iterable[tuple[str, dict[str, Any]]]) -> str:
    header = ("dataset", "rule", "column", "result", "expected", "actual")
    lines = [header]
    for dataset, a in rows:
        status = (a.get("params") or {}).get("status", "PASSED" if a["success"] else "FAILED")
        lines.append(
            (
                dataset,
                a.get("name") or a["assertion"],
                a.get("column") or "-",
                "pass" if a["success"] else status.lower().replace("failed", "FAIL"),
                a.get("expected") or "",
                a.get("actual") or "",
            )
        )
    cells = [[inert(str(c)) for c in r] for r in lines]  # names and values from the events
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def run_demo(output_dir: Path | None = None) -> int:
    # loaded on use: the command line starts (and says what to install) without PySpark
    from lineage_quality.history.store import open_history
    from lineage_quality.lineage.keeper import LineageKeeper
    from lineage_quality.lineage.store import open_lineage
    from lineage_quality.producer import Evaluator, Producer

    root = find_root()
    out = (output_dir or root / "demo-output").resolve()
    if out.exists():
        shutil.rmtree(out)
    (out / "data").mkdir(parents=True)
    events_file = out / "events.jsonl"
    listener_jar(root)  # fail before the producer starts, not after

    bindings = load_contracts([root / "examples" / "demo" / "contracts"])
    transport = FileTransport(FileConfig(log_file_path=str(events_file), append=True))
    # the values and the lineage kept as serve keeps them: `lineage-quality view` shows them
    history_db = out / "history.db"
    producer = Producer(
        Evaluator(bindings, history=open_history(history_db)),
        Forwarder(transport),
        Spool(out / "spool.db"),
        Settings.of(host="127.0.0.1", port=0),
        lineage=LineageKeeper(open_lineage(history_db)),
    )
    producer.start()
    print(f"producer listening on {producer.url}; contracts: {len(bindings)} dataset binding(s)")
    try:
        result = spark_submit(
            [
                *listener_args(
                    root, producer.url, {"spark.openlineage.namespace": "lineage-quality-demo"}
                ),
                str(root / "examples" / "demo" / "pipeline.py"),
                str(root / "examples" / "demo" / "data" / "orders_raw"),
                str(out / "data" / "orders_clean"),
            ],
            cwd=root,
            log_file=out / "spark-submit.log",
        )
        if result.returncode != 0:
            print(f"spark-submit failed ({result.returncode}); see {out / 'spark-submit.log'}")
            return 1
        if not producer.spool.wait_empty(timeout=300):
            print("producer did not forward every event in time")
            return 1
    finally:
        producer.stop()
    events = [json.loads(line) for line in events_file.read_text().splitlines() if line.strip()]
    rows = list(iter_assertions(events))
    print(f"\n{len(events)} lineage events forwarded to {events_file}\n")
    print(format_table(rows))
    failed = sum(1 for _, a in rows if not a["success"])
    print(f"\n{len(rows)} assertions, {failed} not passed (the demo data breaks rules on purpose)")
    print(
        f"\nSee them in the quality view: lineage-quality view --history {history_db}\n"
        "then open http://127.0.0.1:5056/"
    )
    return 0 if rows else 1


def add_parser(sub: Any) -> None:
    """The `demo` command."""
    demo = sub.add_parser("demo", help="run the bundled pipeline end to end (file sink)")
    demo.add_argument("--output-dir", help="default: demo-output/ in the checkout")
    demo.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return run_demo(Path(args.output_dir) if args.output_dir else None)

"""One evaluation per version and streaming micro-batches (issue 51): `make bench`'s two
producer cases that need the real listener, run alone:

    .venv/bin/python bench/reuse.py readers [--rows 2000000] [--readers 10]
    .venv/bin/python bench/reuse.py stream [--rows-per-second 10000] [--seconds 60]

`readers`: a job under spark-submit with the real OpenLineage listener (a file transport)
writes a Parquet dataset once, then `--readers` queries read it unchanged (each writes a small
report, so the listener sends its COMPLETE). The recorded COMPLETEs are then evaluated in order
by one evaluator without reuse and one with it (a SQLite store): scans (datasets actually read)
and evaluation seconds of each. Prints one JSON line.

`stream`: an in-driver job (`attach`) with a rate source into a Parquet file sink, one batch
per 10 s (trigger processingTime), for `--seconds`; the verdict events say which batches each
covered. Kept up: every batch judged alone (a batch is merged with the next ones only when the
evaluation of the previous ones was not done when it came) and every batch judged once. Prints
one JSON line (batches, the batches of each verdict, merged ones, seconds from a batch's newest
file to its COMPLETE being given to the producer).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

CONTRACT = """apiVersion: v3.0.2
kind: DataContract
id: bench-reuse
version: 1.0.0
status: active
schema:
  - name: orders
    customProperties:
      - property: openlineage.namespace
        value: file
      - property: openlineage.name
        value: "*/bench_reuse/orders"
    quality:
      - metric: rowCount
        mustBeGreaterThan: 0
    properties:
      - name: id
        quality:
          - metric: nullValues
            mustBe: 0
          - metric: duplicateValues
            mustBe: 0
      - name: status
        quality:
          - metric: invalidValues
            arguments:
              validValues: [open, closed]
            mustBe: 0
      - name: amount
        quality:
          - metric: nullValues
            mustBe: 0
"""
READERS_JOB = """import sys
from pyspark.sql import SparkSession
base, rows, readers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
spark = SparkSession.builder.appName("bench_reuse").getOrCreate()
orders = f"{base}/bench_reuse/orders"
spark.range(rows).selectExpr(
    "id", "id % 100 * 1.5 AS amount", "IF(id % 3 = 0, 'open', 'closed') AS status"
).write.mode("overwrite").parquet(orders)
for i in range(readers):
    report = spark.read.parquet(orders).groupBy("status").count()
    report.write.mode("overwrite").parquet(f"{base}/bench_reuse/report_{i}")
spark.stop()
"""
STREAM_JOB = """import json, sys, time
from pyspark.sql import SparkSession
import lineage_quality
contracts, base, events, spool, rate, seconds = sys.argv[1:7]
spark = lineage_quality.attach(
    SparkSession.builder.appName("bench_stream").config("spark.sql.shuffle.partitions", "2"),
    contracts=contracts, spool=spool,
    transport={"type": "file", "log_file_path": events, "append": True},
).getOrCreate()
query = (
    spark.readStream.format("rate").option("rowsPerSecond", int(rate)).load()
    .selectExpr("value AS id", "value % 100 * 1.5 AS amount",
                "IF(value % 3 = 0, 'open', 'closed') AS status")
    .writeStream.queryName("orders").format("parquet")
    .option("checkpointLocation", f"{base}/bench_reuse/ck")
    .trigger(processingTime="10 seconds").start(f"{base}/bench_reuse/orders")
)
time.sleep(float(seconds))
query.stop()
done = {str(p["batchId"]): p["numInputRows"] for p in query.recentProgress if p["numInputRows"]}
json.dump(done, open(f"{base}/batches.json", "w"))
spark.stop()
"""


def _submit(args: list[str], log: Path) -> None:
    from lineage_quality.sparksubmit import spark_submit

    done = spark_submit(args, cwd=ROOT, log_file=log)
    if done.returncode != 0:
        raise SystemExit(f"the job failed: see {log}")


def readers(rows: int, count: int) -> dict[str, Any]:
    from lineage_quality.contracts import load_contracts
    from lineage_quality.evaluation.reuse import Reuse
    from lineage_quality.evaluation.session import evaluator_session
    from lineage_quality.history.versions import open_version_verdicts
    from lineage_quality.producer import Evaluator
    from lineage_quality.sparksubmit import listener_jar

    work = Path(tempfile.mkdtemp(prefix="bench-reuse-"))
    (work / "contract.yaml").write_text(CONTRACT)
    (work / "job.py").write_text(READERS_JOB)
    events = work / "events.jsonl"
    _submit(
        [
            "--master",
            "local[2]",
            "--properties-file",
            str(ROOT / "jvm-config" / "spark-defaults.conf"),
            "--conf",
            f"spark.jars={listener_jar(ROOT)}",
            "--conf",
            "spark.openlineage.transport.type=file",
            "--conf",
            f"spark.openlineage.transport.location={events}",
            "--conf",
            "spark.ui.enabled=false",
            str(work / "job.py"),
            str(work),
            str(rows),
            str(count),
        ],
        work / "job.log",
    )
    completes = [
        e
        for e in (json.loads(line) for line in events.read_text().splitlines() if line.strip())
        if e["eventType"] == "COMPLETE"
    ]
    bindings = load_contracts([work / "contract.yaml"])
    spark = evaluator_session("local[2]")
    out: dict[str, Any] = {"rows": rows, "readers": count, "completes": len(completes)}
    for name in ("warm-up", "without reuse", "with reuse"):
        reuse = None
        if name == "with reuse":
            reuse = Reuse(open_version_verdicts(work / f"history-{time.time_ns()}.db"))
        evaluator = Evaluator(bindings, spark=spark, reuse=reuse)
        started = time.perf_counter()
        for event in completes:
            evaluator.evaluate(event)
        seconds = time.perf_counter() - started
        if name != "warm-up":
            out[name] = {
                "scans": evaluator.evaluations,
                "reused": 0 if reuse is None else reuse.reused,
                "seconds": round(seconds, 2),
            }
    spark.stop()
    return out


def stream(rate: int, seconds: float) -> dict[str, Any]:
    from lineage_quality.sparksubmit import spark_submit_path, submit_env

    work = Path(tempfile.mkdtemp(prefix="bench-stream-"))
    (work / "contract.yaml").write_text(CONTRACT)
    (work / "job.py").write_text(STREAM_JOB)
    events = work / "events.jsonl"
    cmd = [
        spark_submit_path(), "--master", "local[2]", "--conf", "spark.ui.enabled=false",
        str(work / "job.py"), str(work / "contract.yaml"), str(work), str(events),
        str(work / "spool.db"), str(rate), str(seconds),
    ]  # fmt: skip
    with (work / "job.log").open("w") as log:
        done = subprocess.run(cmd, cwd=ROOT, env=submit_env(), stdout=log, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise SystemExit(f"the job failed: see {work / 'job.log'}")
    ran = json.loads((work / "batches.json").read_text())
    verdicts = []
    lags = []
    for line in events.read_text().splitlines():
        event = json.loads(line)
        if not event["job"]["name"].endswith(".micro_batches"):
            continue
        facet = event["outputs"][0]["facets"]["lineageQuality_microBatches"]
        verdicts.append(facet["batches"])
        newest = max(m for _, _, m in facet["files"]) / 1000
        judged = datetime.fromisoformat(event["eventTime"].replace("Z", "+00:00")).timestamp()
        lags.append(round(judged - newest, 2))
    covered = sorted(b for v in verdicts for b in v)
    return {
        "rows_per_second": rate,
        "seconds": seconds,
        "batches_with_rows": len(ran),
        "rows_per_batch": sorted(set(ran.values())),
        "verdicts": verdicts,
        "merged": [v for v in verdicts if len(v) > 1],
        "every_batch_once": covered == sorted(int(b) for b in ran),
        "seconds_to_event": lags,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="case", required=True)
    one = sub.add_parser("readers")
    one.add_argument("--rows", type=int, default=2_000_000)
    one.add_argument("--readers", type=int, default=10)
    two = sub.add_parser("stream")
    two.add_argument("--rows-per-second", type=int, default=10_000)
    two.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    if args.case == "readers":
        print(json.dumps(readers(args.rows, args.readers)))
    else:
        print(json.dumps(stream(args.rows_per_second, args.seconds)))


if __name__ == "__main__":
    main()

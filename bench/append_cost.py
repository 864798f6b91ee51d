"""What an append's verdict costs as its table grows (issue 51): the same append of 1M rows to a
Parquet table of 0, 10M and 100M rows, written under the real OpenLineage listener (its events
to a file), then evaluated as `serve` evaluates them: the table's write first (its states kept in
a history store), then the append, timed, by fresh evaluators sharing that store (each a producer
that never saw the table), beside the same append read whole (`lineageQuality.scope: exact`).

    .venv/bin/python bench/append_cost.py [--sizes 0,10000000,100000000] [--added 1000000]
        [--repeat 3] [--out bench/results/appends.md]

The tables are generated once under bench/data/appends/ (not kept in the repo) and reused."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import attrs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from lineage_quality.contracts import load_contracts  # noqa: E402
from lineage_quality.history import open_history  # noqa: E402
from lineage_quality.producer import Evaluator  # noqa: E402
from lineage_quality.sparksubmit import listener_args, spark_submit  # noqa: E402

HERE = Path(__file__).resolve().parent
CONTRACT = HERE / "contracts" / "append_cost.odcs.yaml"
DATA = HERE / "data" / "appends"


def generate(base: int, added: int) -> tuple[Path, list[dict[str, Any]]]:
    """The table (`base` rows, then `added` appended) and the listener's events, made once."""
    where = DATA / f"{base}_{added}"
    path = where / "bench_appends" / "orders"
    events = where / "events.jsonl"
    if not (events.exists() and path.exists()):
        shutil.rmtree(where, ignore_errors=True)
        where.mkdir(parents=True)
        conf = {
            "spark.openlineage.transport.type": "file",
            "spark.openlineage.transport.location": str(events),
            "spark.openlineage.namespace": "bench-appends",
            "spark.ui.enabled": "false",
            "spark.driver.memory": "4g",
        }
        started = time.time()
        result = spark_submit(
            [
                *listener_args(ROOT, "http://127.0.0.1:9", conf, master="local[2]"),
                str(HERE / "jobs" / "append_job.py"), str(path), str(base), str(added),
            ],
            cwd=ROOT,
            log_file=where / "spark-submit.log",
            timeout=3600,
        )  # fmt: skip
        if result.returncode != 0:
            raise SystemExit(f"the job failed: see {where / 'spark-submit.log'}")
        print(f"generated {base:,} + {added:,} rows in {time.time() - started:.0f} s", flush=True)
    found = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    writes = sorted(
        (
            e
            for e in found
            if e.get("eventType") == "COMPLETE"
            and any(
                o.get("name") == str(path) and "outputStatistics" in o.get("outputFacets", {})
                for o in e.get("outputs", [])
            )
        ),
        key=lambda e: e["eventTime"],
    )
    return path, writes


def _timed(evaluator: Evaluator, event: dict[str, Any]) -> tuple[float, list[Any]]:
    started = time.perf_counter()
    found = evaluator.evaluate(event)
    seconds = time.perf_counter() - started
    (results,) = found.values()
    errors = [r.message for r in results if r.status.value == "ERROR"]
    if errors:
        raise SystemExit(f"an evaluation failed: {errors[0]}")
    return seconds, results


def measure(base: int, added: int, repeat: int, spark: Any, tmp: Path) -> dict[str, Any]:
    _, writes = generate(base, added)
    bindings = load_contracts([CONTRACT])
    exact = [attrs.evolve(b, scope="exact") for b in bindings]
    history = open_history(tmp / f"history-{base}.db")
    out: dict[str, Any] = {"base": base, "added": added}
    first = Evaluator(bindings, spark=spark, history=history)
    if base:
        out["base_write_s"], _ = _timed(first, writes[0])  # the whole table, states kept
    merged, whole, scopes = [], [], set()
    for _ in range(repeat):
        seconds, results = _timed(Evaluator(bindings, spark=spark, history=history), writes[-1])
        merged.append(seconds)
        scopes.add((results[0].scope or "").split(" merged")[0][:60])
        seconds, _ = _timed(Evaluator(exact, spark=spark), writes[-1])
        whole.append(seconds)
    out["append_s"] = statistics.median(merged)
    out["append_exact_s"] = statistics.median(whole)
    out["runs"] = {"append": merged, "exact": whole}
    out["scope"] = sorted(scopes)
    return out


def markdown(found: list[dict[str, Any]], command: str) -> str:
    first = found[0]["append_s"]
    lines = [
        "## An append's cost as its table grows",
        "",
        f"`{command}`: the same append of {found[0]['added']:,} rows to a Parquet table, written "
        "under the real listener, evaluated with 10 rules (row count, nulls in percent, a "
        "pattern, duplicate keys, avg, max, sum, a value list, two not-null); median of the "
        "repeats, each by a fresh evaluator sharing the history store.",
        "",
        "| table before | append judged (s) | ratio to the empty table "
        "| read whole, `scope: exact` (s) | what the verdict says |",
        "| ---: | ---: | ---: | ---: | --- |",
    ]
    for row in found:
        scope = "; ".join(row["scope"]) or "the run's rows (the table held nothing else)"
        lines.append(
            f"| {row['base']:,} | {row['append_s']:.2f} | {row['append_s'] / first:.2f}x "
            f"| {row['append_exact_s']:.2f} | {scope} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="0,10000000,100000000")
    parser.add_argument("--added", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=str(HERE / "results" / "appends.md"))
    args = parser.parse_args()
    from lineage_quality.evaluation.session import evaluator_session

    spark = evaluator_session("local[2]", {})
    tmp = DATA / "stores"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    found = []
    for base in (int(s) for s in args.sizes.split(",")):
        if not found:  # the first size once untimed: the JVM's warm-up is nobody's cost
            measure(base, args.added, 1, spark, tmp)
        row = measure(base, args.added, args.repeat, spark, tmp)
        print(json.dumps({k: v for k, v in row.items() if k != "runs"}), flush=True)
        found.append(row)
    command = " ".join(["python", "bench/append_cost.py", *sys.argv[1:]])
    text = markdown(found, command)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    (Path(args.out).with_suffix(".json")).write_text(json.dumps(found, indent=1))
    print(text)


if __name__ == "__main__":
    main()

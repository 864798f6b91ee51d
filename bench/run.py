"""`make bench`: the engine against the bare-scan floor, on generated data.

    .venv/bin/python bench/run.py [--rows 5000000] [--repeat 3]

Prints, per case, the best wall time of `--repeat` runs: a bare aggregation reading every
column (the floor: one scan), the 10 fusable rules of the job-count test, the 50 mixed rules
(one fused scan + two uniqueness passes), and, for comparison, the same 10 rules evaluated one
query each (what a tool without fusion does).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests" / "spark"))

from test_job_count import fifty_mixed_rules, ten_rules  # noqa: E402

from lineage_quality.engine.run import evaluate_dataframe  # noqa: E402
from lineage_quality.producer.evaluator import evaluator_session  # noqa: E402


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    spark = evaluator_session("local[*]")
    spark.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "data")
        from pyspark.sql import functions as F

        (
            spark.range(args.rows)
            .select(
                F.col("id").cast("int").alias("id"),
                F.concat(F.lit("n"), (F.col("id") % 100000).cast("string")).alias("name"),
                F.when(F.col("id") % 2 == 0, "a").otherwise("b").alias("kind"),
                (F.col("id") % 997).cast("double").alias("score"),
            )
            .write.parquet(path)
        )
        df = spark.read.parquet(path)
        ten, fifty = ten_rules(), fifty_mixed_rules()
        cases = {
            "bare scan of every column (floor)": lambda: df.agg(
                *[F.max(c) for c in df.columns]
            ).first(),
            "10 fusable rules, fused": lambda: evaluate_dataframe(df, ten),
            "10 fusable rules, one query each": lambda: [evaluate_dataframe(df, [r]) for r in ten],
            "50 mixed rules (1 scan + 2 key sets)": lambda: evaluate_dataframe(df, fifty),
        }
        best(cases["bare scan of every column (floor)"], 1)  # warm-up: JIT, file listing
        cores = spark.sparkContext.defaultParallelism
        print(f"rows={args.rows:,} repeat={args.repeat} cores={cores}")
        for name, fn in cases.items():
            print(f"{name:40s} {best(fn, args.repeat):8.2f} s")
    spark.stop()


if __name__ == "__main__":
    main()

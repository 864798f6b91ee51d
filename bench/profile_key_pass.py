"""What RU's key-set pass costs over a bare read of its key columns, key set by key set.

    .venv/bin/python bench/profile_key_pass.py [--rows 10000000] [--repeat 6]
        [--java-options "-XX:+UseParallelGC"]

The bench's Spark settings and the engine's jar, one process: a bare count of the key columns
(all three, then the composite key's two), each key set of RU counted alone by the engine's
key-set pass (`key_set_counts`), then both together; one untimed round, then `--repeat` rounds
interleaved; min and median wall seconds. The difference between a key set's pass and the bare
read of its columns is what hashing, shuffling and counting its keys cost. `--java-options`
replaces the driver JVM's options (the same for every case: a GC compared against itself).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "systems"))
sys.path.insert(0, str(HERE.parent / "python"))

import ours  # noqa: E402
from settings import session  # noqa: E402

ORDER = ["order_id"]
COMPOSITE = ["customer_id", "created_at"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=6)
    parser.add_argument("--java-options", default=None)
    args = parser.parse_args()
    from pyspark.sql import functions as F

    from lineage_quality.engine.key_sets import key_set_counts

    conf = ours.conf()
    if args.java_options:
        conf["spark.driver.extraJavaOptions"] = args.java_options
    spark = session(conf)
    data = str(HERE / "data" / f"orders_{args.rows}")
    rows = args.rows

    def read(columns: list[str]) -> Callable[[Any], Any]:
        return lambda df: df.agg(*[F.count(c) for c in columns]).collect()

    def keys(sets: list[list[str]]) -> Callable[[Any], Any]:
        return lambda df: key_set_counts(df, sets, rows)

    cases: dict[str, Callable[[Any], Any]] = {
        "bare read of the 3 key columns": read(ORDER + COMPOSITE),
        "bare read of customer_id, created_at": read(COMPOSITE),
        "key set order_id alone": keys([ORDER]),
        "key set (customer_id, created_at) alone": keys([COMPOSITE]),
        "both key sets (RU's pass)": keys([ORDER, COMPOSITE]),
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for round_ in range(args.repeat + 1):
        for name, run in cases.items():
            df = spark.read.parquet(data)
            start = time.perf_counter()
            run(df)
            if round_ > 0:
                times[name].append(time.perf_counter() - start)
    print(f"{args.rows:,} rows, Spark {spark.version}, min / median of {args.repeat}:")
    for name, walls in times.items():
        print(f"  {name:42s} {min(walls):.2f} s  {statistics.median(walls):.2f} s")
    spark.stop()


if __name__ == "__main__":
    main()

"""What py4j's answers past 8 KiB cost with and without TCP_NODELAY on its sockets.

    .venv/bin/python bench/profile_py4j_nodelay.py [--columns 300] [--repeat 9]

Two processes, the bench's Spark settings and the engine's jar, one with
`LINEAGE_QUALITY_PY4J_NODELAY=0` (py4j's sockets as PySpark leaves them), one without (the
engine sets TCP_NODELAY when it first resolves a helper). Each prints, median ms of `--repeat`
after 3 unmeasured: a py4j call answering 4,000 and 9,000 characters; on a fresh read of a Parquet
table of `--columns` long-named bigint columns (100,000 rows; the read not timed), its schema
(PySpark's `DataFrame.schema`) and 3 rules evaluated (`evaluate_dataframe`, as the producer
does after reading a dataset).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "systems"))
sys.path.insert(0, str(HERE.parent / "python"))

SWITCH = "LINEAGE_QUALITY_PY4J_NODELAY"


def _median_ms(run: Any, repeat: int, before: Any = lambda: None) -> float:
    """Median ms of `run(before())`, `before` not timed."""
    for _ in range(3):
        run(before())
    times = []
    for _ in range(repeat):
        given = before()
        start = time.perf_counter()
        run(given)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def measure(columns: int, repeat: int) -> None:
    import ours
    from pyspark.sql import functions as F
    from settings import session

    from lineage_quality.engine.jvm_helpers import jvm_helper

    spark = session(ours.conf())
    jvm_helper("ColumnProgram", "COLUMN_PROGRAM")  # what the first evaluation does
    strings: Any = spark._jvm.org.apache.commons.lang3.StringUtils
    path = HERE / "data" / f"wide_{columns}"
    if not (path / "_SUCCESS").exists():
        spark.range(100_000).select(
            *[(F.col("id") * i).alias(f"customer_attribute_{i:04d}") for i in range(columns)]
        ).write.mode("overwrite").parquet(str(path))
    rules = [
        {"id": "r1", "kind": "not_null", "column": "customer_attribute_0001"},
        {"id": "r2", "kind": "range", "column": "customer_attribute_0002", "min": 0, "max": 10**9},
        {"id": "r3", "kind": "unique", "columns": ["customer_attribute_0003"]},
    ]
    mode = "py4j's sockets" if os.environ.get(SWITCH) == "0" else "TCP_NODELAY"
    print(f"{mode} (Spark {spark.version}), median ms of {repeat}:")
    for chars in (4_000, 9_000):
        ms = _median_ms(lambda _, n=chars: strings.repeat("x", n), repeat)
        print(f"  a call answering {chars:,} characters: {ms:.2f}")

    def read() -> Any:
        return spark.read.parquet(str(path))

    ms = _median_ms(lambda df: df.schema, repeat, read)
    print(f"  the schema of a fresh read of the {columns}-column table: {ms:.1f}")
    ms = _median_ms(lambda df: ours.run(spark, df, rules), repeat, read)
    print(f"  3 rules evaluated on a fresh read of it: {ms:.1f}")
    spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        measure(args.columns, args.repeat)
        return
    for switch in ("0", "1"):
        subprocess.run(
            [sys.executable, __file__, "--one", f"--columns={args.columns}",
             f"--repeat={args.repeat}"],
            env={**os.environ, SWITCH: switch},
            check=True,
        )  # fmt: skip


if __name__ == "__main__":
    main()

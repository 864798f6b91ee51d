"""lineage-quality against floor (a), and floor (a) reading the string values it skips.

    .venv/bin/python bench/profile_values.py [--rows 10000000] [--rules R30] [--repeat 5]

Floor (a) counts each column (`count(c)`), which only tests nulls: the Parquet reader never
decodes a string from its dictionary for it. The middle row also sums `octet_length(c)` of each
string column, which makes every string value materialize as the rules' tests must. The last row
is lineage-quality with its value tests on Parquet dictionaries turned off
(`LINEAGE_QUALITY_DICTIONARY_VALUES=0`), which tests every row's string. One process,
the bench's Spark settings and the engine's jar, 3 warm-up rounds, then `--repeat` interleaved
rounds; wall time and the executors' CPU time of each.
"""

from __future__ import annotations

import argparse
import os
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
from profile_cost import executor_cpu_seconds  # noqa: E402
from rulesets import columns_of, ruleset  # noqa: E402
from settings import session  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--rules", default="R30")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from pyspark.sql import functions as F

    spark = session(ours.conf())
    data = str(HERE / "data" / f"orders_{args.rows}")
    rules = ruleset(args.rules)
    columns = columns_of(rules)

    def floor_a(df: Any) -> None:
        df.agg(*[F.count(c) for c in columns]).collect()

    def floor_values(df: Any) -> None:
        kinds = dict(df.dtypes)
        df.agg(
            *[F.sum(F.octet_length(c)) if kinds[c] == "string" else F.count(c) for c in columns]
        ).collect()

    def dictionaries_off(df: Any) -> None:
        os.environ["LINEAGE_QUALITY_DICTIONARY_VALUES"] = "0"
        try:
            ours.run(spark, df, rules)
        finally:
            del os.environ["LINEAGE_QUALITY_DICTIONARY_VALUES"]

    systems: dict[str, Callable[[Any], Any]] = {
        "floor (a)": floor_a,
        "floor (a) + string values": floor_values,
        "lineage-quality": lambda df: ours.run(spark, df, rules),
        "lineage-quality, no dictionaries": dictionaries_off,
    }

    def once(run: Callable[[Any], Any]) -> tuple[float, float]:
        df = spark.read.parquet(data)
        cpu, start = executor_cpu_seconds(spark), time.perf_counter()
        run(df)
        return time.perf_counter() - start, executor_cpu_seconds(spark) - cpu

    for _ in range(3):
        for run in systems.values():
            once(run)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in systems}
    for _ in range(args.repeat):
        for name, run in systems.items():
            times[name].append(once(run))
    for name, runs in times.items():
        print(
            f"{args.rules} {args.rows:,} rows, Spark {spark.version}: {name:33s} wall min "
            f"{min(w for w, _ in runs):.2f} s, median {statistics.median(w for w, _ in runs):.2f}"
            f" s; executor CPU median {statistics.median(c for _, c in runs):.2f} s"
        )
    spark.stop()


if __name__ == "__main__":
    main()

"""What opening a plain Parquet dataset costs the producer, its schema read from the footer in
the driver (JVM helper ParquetSchema) against Spark's own inference (a Spark job).

    .venv/bin/python bench/profile_read_schema.py [--rows 1000000] [--repeat 30]

One process, the bench's Spark settings and the engine's jar: `read_dataset` of the bench's data
folder (as the producer opens a dataset a run wrote), then of the folder's last file alone (as
it opens the files a run left), with `LINEAGE_QUALITY_PARQUET_SCHEMA` on and off in turn, after
5 untimed rounds. Per case the min and median milliseconds and the Spark jobs one opening
started.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "systems"))
sys.path.insert(0, str(HERE.parent / "python"))

import data  # noqa: E402
import ours  # noqa: E402
from settings import session  # noqa: E402

from lineage_quality.evaluation.datasets import read_dataset  # noqa: E402


def _timed(spark: Any, open_it: Callable[[], Any]) -> tuple[float, int]:
    sc = spark.sparkContext
    group = f"read-{uuid.uuid4().hex}"
    sc.setJobGroup(group, group)
    try:
        start = time.perf_counter()
        df = open_it()
        _ = df.schema  # what the engine asks first
        ms = (time.perf_counter() - start) * 1000
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return ms, len(sc.statusTracker().getJobIdsForGroup(group))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    spark = session(ours.conf())
    folder = str(data.ensure(spark, args.rows, HERE / "data"))
    last = sorted(str(p) for p in Path(folder).glob("*.parquet"))[-1]
    cases: dict[str, Callable[[], Any]] = {
        "the folder": lambda: read_dataset(spark, "file", folder),
        "one file a run left": lambda: read_dataset(spark, "file", folder, files=[last]),
    }
    times: dict[tuple[str, str], list[float]] = {}
    jobs: dict[tuple[str, str], int] = {}
    for round_ in range(5 + args.repeat):
        for switch in ("1", "0"):
            os.environ["LINEAGE_QUALITY_PARQUET_SCHEMA"] = switch
            for name, open_it in cases.items():
                ms, started = _timed(spark, open_it)
                if round_ >= 5:
                    times.setdefault((name, switch), []).append(ms)
                    jobs[(name, switch)] = started
    print(f"{args.rows:,} rows, Spark {spark.version}, min / median of {args.repeat}, ms:")
    for (name, switch), values in times.items():
        label = "footer in the driver" if switch == "1" else "Spark infers (a job)"
        print(
            f"  {name:<20} {label:<21} {min(values):7.1f} {statistics.median(values):7.1f}"
            f"  jobs {jobs[(name, switch)]}"
        )


if __name__ == "__main__":
    main()

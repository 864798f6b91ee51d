"""Spark settings every system runs with, so only the system differs between timings."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

SPARK_CONF = {
    "spark.master": "local[2]",
    "spark.driver.memory": "3g",
    "spark.sql.shuffle.partitions": "16",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    # One worker JVM per system stays alive for the whole run, but only one runs at a time: an
    # idle JVM must hand its heap back, or 11 of them at 3 GiB exhaust 24 GiB and the kernel's
    # OOM killer ends one (it did, in RU at 10M). G1's periodic collection uncommits an idle
    # JVM's heap down to twice what is live; the growth policy during a run is left as it is
    # (a lower MinHeapFreeRatio slowed R30 at 1M by ~25% through extra collections).
    "spark.driver.extraJavaOptions": (
        "-XX:+UseG1GC -XX:G1PeriodicGCInterval=5000 -XX:MaxHeapFreeRatio=50"
    ),
}


def session(extra: dict[str, str]) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("lineage-quality-bench")
    for key, value in {**SPARK_CONF, **extra}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def interleaved(
    spark: Any,
    data: str,
    systems: dict[str, Callable[[Any], Any]],
    repeat: int,
    after: Callable[[str], None] | None = None,
) -> dict[str, list[float]]:
    """Wall seconds of each system on a fresh read of `data`: 2 warm-up rounds, then `repeat`
    rounds with the systems interleaved; `after(name)` runs after each timed run."""

    def once(run: Callable[[Any], Any]) -> float:
        df = spark.read.parquet(data)
        start = time.perf_counter()
        run(df)
        return time.perf_counter() - start

    for _ in range(2):
        for run in systems.values():
            once(run)
    times: dict[str, list[float]] = {name: [] for name in systems}
    for _ in range(repeat):
        for name, run in systems.items():
            times[name].append(once(run))
            if after is not None:
                after(name)
    return times

"""Seeded benchmark data: an `orders` table written as Parquet, the same bytes for the same
row count on every machine (every value is a hash of the row number and a fixed seed).

    order_id       bigint     unique but for ~0.1% repeats of the previous id
    customer_id    string     C<k // 3>; with created_at a key repeated for ~0.1% of rows
    customer_name  string     ~2% null
    status         string     5 codes, ~0.5% UNKNOWN
    email          string     ~1% malformed
    amount         double     uniform 0..1000, ~0.5% negative
    quantity       int        1..50
    created_at     timestamp  one second per row from 2026-01-01
    country        string     10 codes, ~1% null
    discount       double     uniform 0..0.5
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from rulesets import COUNTRIES, STATUSES

SEED = 20261122
FILES = 8  # 8 files: both cores busy from the first task on


def _h(column: Any, salt: int, modulo: int) -> Any:
    from pyspark.sql import functions as F

    return F.pmod(F.xxhash64(column, F.lit(SEED + salt)), F.lit(modulo))


def generate(spark: Any, rows: int, path: Path) -> None:
    from pyspark.sql import functions as F

    i = F.col("id")
    repeat_key = _h(i, 2, 1000) == 1  # this row repeats the previous row's (customer, time)
    k = F.when(repeat_key & (i > 0), i - 1).otherwise(i)
    statuses = F.array(*[F.lit(s) for s in STATUSES])
    countries = F.array(*[F.lit(c) for c in COUNTRIES])
    name = F.concat(F.lit("name"), (i % 1000).cast("string"))
    df = spark.range(0, rows, 1, FILES).select(
        F.when((_h(i, 1, 1000) == 0) & (i > 0), i - 1).otherwise(i).alias("order_id"),
        F.concat(F.lit("C"), (k / 3).cast("long").cast("string")).alias("customer_id"),
        F.when(_h(i, 3, 50) == 0, F.lit(None).cast("string"))
        .otherwise(name)
        .alias("customer_name"),
        F.when(_h(i, 4, 200) == 0, F.lit("UNKNOWN"))
        .otherwise(F.element_at(statuses, (_h(i, 5, 5) + 1).cast("int")))
        .alias("status"),
        F.when(_h(i, 6, 100) == 0, F.concat(name, F.lit(" at example")))
        .otherwise(F.concat(name, F.lit("."), (i % 97).cast("string"), F.lit("@example.com")))
        .alias("email"),
        (
            (_h(i, 7, 100_000).cast("double") / 100.0)
            * F.when(_h(i, 8, 200) == 0, F.lit(-0.1)).otherwise(F.lit(1.0))
        ).alias("amount"),
        (_h(i, 9, 50) + 1).cast("int").alias("quantity"),
        F.timestamp_seconds(F.lit(1_767_225_600) + k).alias("created_at"),
        F.when(_h(i, 10, 100) == 0, F.lit(None).cast("string"))
        .otherwise(F.element_at(countries, (_h(i, 11, 10) + 1).cast("int")))
        .alias("country"),
        (_h(i, 12, 5000).cast("double") / 10_000.0).alias("discount"),
    )
    df.write.mode("overwrite").parquet(str(path))


def ensure(spark: Any, rows: int, folder: Path) -> Path:
    """The data set of `rows` rows under `folder`, generated once (a marker says it is whole;
    another, `_generated.json`, how long that took: generation())."""
    path = folder / f"orders_{rows}"
    done = path / "_SUCCESS"
    if not done.exists():
        started = time.perf_counter()
        generate(spark, rows, path)
        seconds = time.perf_counter() - started
        made = {"rows": rows, "seconds": round(seconds, 1), "spark": spark.version}
        (path / "_generated.json").write_text(json.dumps(made))
        print(f"generated {rows:,} rows in {seconds:.0f} s at {path}", flush=True)
    return path


def generation(path: Path) -> dict[str, Any] | None:
    """What ensure() noted when it generated the data set at `path` (rows, seconds, Spark
    version); None for one generated before it kept that note."""
    note = path / "_generated.json"
    return json.loads(note.read_text()) if note.exists() else None


def size_on_disk(path: Path) -> int:
    """Bytes of the data set's Parquet files."""
    return sum(f.stat().st_size for f in path.glob("*.parquet"))

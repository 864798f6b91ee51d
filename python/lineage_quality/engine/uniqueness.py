"""Duplicate counts for uniqueness rules: rows whose key (all parts non-null) repeats an earlier
row's key, i.e. non-null rows - distinct keys. Exact on every path.

The plain path groups by the key after hash-partitioning on it. The hashed path (the JVM helper
`lineagequality.KeyHashes`) shuffles one 64-bit hash per row instead of the key, counts distinct
hashes per partition in a sorted primitive array, and lists the hashes seen more than once. Only
those can hide a duplicate or a collision, so one more pass groups just the rows carrying them by
their real key: distinct keys = distinct hashes + (distinct keys - 1) per repeated hash. A
crafted collision therefore costs time, never a wrong count. When too many hashes repeat (a
mostly duplicated key), the plain path runs instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import reduce
from typing import Any

import attrs
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from lineage_quality.engine.columns import quote
from lineage_quality.engine.jvm_helpers import jvm_helper

HASHED_FROM_ROWS = 500_000  # below it the hashed path's extra jobs cost more than they save
MAX_CANDIDATES = 1_000_000  # repeated hashes checked by a broadcast join; past it, plain path
ROWS_PER_PARTITION = 4_000_000  # bounds each partition's sorted hashes (32 MiB, 64 growing)
ROWS_PER_TASK = 1_000_000  # below it a reduce task's scheduling outweighs its counting
# Types whose Spark hash agrees with grouping equality (Spark hashes -0.0 as 0.0 and every NaN
# alike, as grouping does); others (arrays, structs, maps) take the plain path.
_HASHABLE = (
    "tinyint", "smallint", "int", "bigint", "float", "double", "string", "boolean", "date",
    "timestamp", "timestamp_ntz", "binary", "decimal",
)  # fmt: skip
# Types whose value cast to bigint is one-to-one: the value itself serves as the hash.
SELF_HASHED = ("tinyint", "smallint", "int", "bigint")


@attrs.frozen
class KeyCounts:
    """What a key set's pass counts: `rows` whose key parts are all non-null, and the `distinct`
    keys among them. The duplicates are the difference; for a one-column key the two are also
    that column's non-null and distinct counts (its `dataQualityMetrics`)."""

    rows: int
    distinct: int
    # Every row the pass read, nulls too, when it counted them (the packed pass does), so the
    # caller can tell whether it read the rows its scan read; not part of what was counted.
    read: int | None = attrs.field(default=None, eq=False)

    @property
    def duplicates(self) -> int:
        return self.rows - self.distinct


def col(name: str) -> Column:
    """The column `name` (a dot or a backtick in it is part of the name)."""
    return F.col(quote(name))


def is_not_null(name: str) -> Column:
    return col(name).isNotNull()


def not_null(columns: Sequence[str]) -> Column:
    return reduce(lambda a, b: a & b, [is_not_null(c) for c in columns])


def grouped_duplicate_count(df: DataFrame, columns: Sequence[str]) -> int:
    """The plain path: group by the key itself."""
    return grouped_key_counts(df, columns).duplicates


def grouped_key_counts(df: DataFrame, columns: Sequence[str]) -> KeyCounts:
    keys = [col(c) for c in columns]
    # Hash-partitioned on the key first: the grouping then runs once, after the shuffle. Without
    # it Spark pre-aggregates before shuffling, which for near-unique keys (what a uniqueness
    # rule expects) only builds a hash table as large as the input.
    grouped = (
        df.where(not_null(columns))
        .repartition(*keys)
        .groupBy(*keys)
        .agg(F.count(F.lit(1)).alias("lq_n"))
    )
    row = grouped.agg(
        F.coalesce(F.sum("lq_n"), F.lit(0)).alias("rows"), F.count(F.lit(1)).alias("keys")
    ).first()
    assert row is not None
    return KeyCounts(int(row["rows"]), int(row["keys"]))


# Tests only: hashes are taken modulo this (> 0), so that nearly all collide. The JVM helper
# that hashes a scan's columns itself (KeyColumns) is given the same, so both hash alike.
WEAK_HASH_MODULUS = 0


def key_hash(keys: Sequence[Column]) -> Column:
    """The 64-bit hash the hashed path shuffles: xxhash64 (as KeyColumns computes it)."""
    if WEAK_HASH_MODULUS > 0:
        return F.pmod(F.xxhash64(*keys), F.lit(WEAK_HASH_MODULUS))
    return F.xxhash64(*keys)


def type_of(df: DataFrame, column: str) -> str:
    return next((f.dataType.simpleString() for f in df.schema.fields if f.name == column), "")


def hashable(df: DataFrame, columns: Sequence[str]) -> bool:
    return all(type_of(df, c).split("(")[0] in _HASHABLE for c in columns)


def partitions(df: DataFrame, rows: int | None) -> int:
    """The pass's partitions for `rows` hashes (None: not known): enough that none holds more
    than ROWS_PER_PARTITION; otherwise about ROWS_PER_TASK each, at least one per core and at
    most `spark.sql.shuffle.partitions`. A session's default of 200 would give a million rows
    200 tasks of 5,000 hashes, each costing more to schedule than to count."""
    spark = df.sparkSession
    configured = int(spark.conf.get("spark.sql.shuffle.partitions") or 200)
    return sized(rows, configured, spark.sparkContext.defaultParallelism)


def sized(rows: int | None, configured: int, cores: int) -> int:
    """`partitions` from its numbers (pure, for the tests)."""
    if rows is None:
        return max(configured, 1)
    wanted = min(configured, max(cores, math.ceil(rows / ROWS_PER_TASK)))
    return max(wanted, math.ceil(rows / ROWS_PER_PARTITION), 1)


def hashed_duplicate_count(
    df: DataFrame, columns: Sequence[str], helper: Any, rows: int | None = None
) -> int | None:
    """The hashed path; None when too many hashes repeat (the caller runs the plain path)."""
    counted = hashed_key_counts(df, columns, helper, rows)
    return None if counted is None else counted.duplicates


def hashed_key_counts(
    df: DataFrame, columns: Sequence[str], helper: Any, rows: int | None = None
) -> KeyCounts | None:
    names = [f"lq_k{i}" for i in range(len(columns))]
    # A single integer-like key is its own 64-bit "hash": no two keys share one, so the
    # distinct count is exact without a second pass.
    exact = len(columns) == 1 and type_of(df, columns[0]) in SELF_HASHED
    h = col(columns[0]).cast("long") if exact else key_hash([col(c) for c in columns])
    keyed = df.where(not_null(columns)).select(
        h.alias("lq_h"), *[col(c).alias(n) for c, n in zip(columns, names, strict=True)]
    )
    hashes = keyed.select("lq_h").repartition(partitions(df, rows), "lq_h")
    summary = helper.summarize(hashes._jdf, 0 if exact else MAX_CANDIDATES)
    distinct = int(summary.distinct())
    total = int(summary.rows())
    if exact:
        return KeyCounts(total, distinct)
    if summary.overflow():
        return None
    if summary.candidateCount() == 0:
        return KeyCounts(total, distinct)
    spark = df.sparkSession
    candidates = DataFrame(summary.candidates(spark._jsparkSession), spark).withColumnRenamed(
        "h", "lq_h"
    )
    per_hash = (
        keyed.join(F.broadcast(candidates), "lq_h")
        .groupBy("lq_h", *names)
        .count()
        .groupBy("lq_h")
        .agg(F.count(F.lit(1)).alias("lq_keys"))
    )
    row = per_hash.agg(F.coalesce(F.sum(F.col("lq_keys") - 1), F.lit(0))).first()
    assert row is not None
    return KeyCounts(total, distinct + int(row[0]))  # each shared hash hid (keys - 1) keys


def duplicate_count(df: DataFrame, columns: Sequence[str], rows: int | None = None) -> int:
    """Non-null rows - distinct keys of `columns`; `rows` (the dataset's row count, when known)
    sizes the hashed path's partitions."""
    return key_counts(df, columns, rows).duplicates


def key_counts(df: DataFrame, columns: Sequence[str], rows: int | None = None) -> KeyCounts:
    """`duplicate_count`'s two numbers (non-null rows, distinct keys), by the same paths."""
    helper = jvm_helper("KeyHashes", "KEY_HASHES")
    large = rows is None or rows >= HASHED_FROM_ROWS
    if helper is not None and large and hashable(df, columns):
        counted = hashed_key_counts(df, columns, helper, rows)
        if counted is not None:
            return counted
    return grouped_key_counts(df, columns)

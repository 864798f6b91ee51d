"""The floors' shared pieces: hand-written Spark, independent of every system measured."""

from __future__ import annotations

from typing import Any


def conf() -> dict[str, str]:
    return {}


def version() -> str:
    from pyspark import __version__

    return f"pyspark {__version__}"


def bare_aggregation(df: Any, columns: list[str]) -> None:
    """One aggregation touching each column once: the cost of reading the data (floor a)."""
    from pyspark.sql import functions as F

    df.agg(*[F.count(c) for c in columns]).collect()


def group_counts(df: Any, rules: list[dict[str, Any]]) -> None:
    """One bare groupBy().count() per uniqueness key set (what floor c adds to floor a)."""
    for rule in rules:
        if rule["kind"] == "unique":
            df.groupBy(*rule["columns"]).count().count()

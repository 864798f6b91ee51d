"""A rule's `filter_condition` (seed 002's rule model): the rows it selects, sandboxed as a
`type: sql` query is (engine/sql_sandbox.py).

The condition must parse as ONE SQL expression (no `) UNION (...` tricks), and the query built
from it, `SELECT * FROM <the dataset's view> WHERE (<condition>)`, is checked on Spark's analyzed
plan against the same allow-list: it reads only the bound dataset and calls nothing. Its errors
say Spark's error class, never the JVM's text. The rules sharing one condition are measured in
one more scan of the rows it selects (the fused scan of the whole dataset cannot count them).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.sql import DataFrame

from lineage_quality.engine.sql_sandbox import UnsafeQueryError, check_analyzed, safe_error


@contextmanager
def filtered(df: DataFrame, condition: str) -> Iterator[DataFrame]:
    """The rows of `df` where `condition` holds, while the block runs; UnsafeQueryError (its
    text safe for a facet) when the condition is not a plain predicate on the dataset."""
    spark = df.sparkSession
    parser = spark._jsparkSession.sessionState().sqlParser()
    try:
        parser.parseExpression(condition)
    except Exception as exc:
        raise UnsafeQueryError(f"filter_condition does not parse: {safe_error(exc)}") from exc
    view = f"lq_filter_{uuid.uuid4().hex}"
    df.createOrReplaceTempView(view)
    try:
        try:
            selected = spark.sql(f"SELECT * FROM `{view}` WHERE ({condition})")
        except Exception as exc:
            raise UnsafeQueryError(f"filter_condition failed: {safe_error(exc)}") from exc
        check_analyzed(selected._jdf.queryExecution().analyzed(), view)
        yield selected
    finally:
        spark.catalog.dropTempView(view)

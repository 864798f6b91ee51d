"""A plain Parquet dataset's schema read from its footer in the driver, so that opening it starts
no Spark job.

Without a schema, `spark.read.parquet(...)` runs a Spark job to read one footer (~40 ms of every
evaluation of such a dataset, whatever its size). JVM helper `lineagequality.ParquetSchema` reads
the footer Spark would read, the way Spark reads it, and answers nothing wherever the two could
differ; then Spark infers the schema as before. `LINEAGE_QUALITY_PARQUET_SCHEMA=0` turns it off.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrameReader, SparkSession

from lineage_quality.engine.jvm_helpers import jvm_helper

log = logging.getLogger(__name__)


def with_footer_schema(
    spark: SparkSession, reader: DataFrameReader, paths: Sequence[str], base: str | None
) -> DataFrameReader:
    """`reader` (Parquet, no schema yet) given the schema Spark would infer for `paths` (one
    folder, or files whose partition folders start at `base`), or as it was."""
    helper = jvm_helper("ParquetSchema", "PARQUET_SCHEMA")
    jreader: Any = getattr(reader, "_jreader", None)
    if helper is None or jreader is None:
        return reader
    try:
        encoded = "".join(f"{len(path)}:{path}" for path in paths)  # one call for them all
        schema = helper.of(spark._jsparkSession, encoded, base)
        if schema is not None:
            jreader.schema(schema)
    except Exception as exc:  # an older engine jar: Spark infers it, only slower
        log.debug("footer schema not read: %s", exc)
    return reader

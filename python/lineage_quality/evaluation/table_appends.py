"""Which rows a Delta commit appended, so that its verdict is judged on them alone
(evaluation/increments.py). I/O: reads the table's history and its snapshots' file lists.

A commit is taken for an append only when Delta says so (its history's operation is a `WRITE`
in mode `Append`, or a `STREAMING UPDATE` in output mode `Append`) and the version before it
keeps every file it had (nothing removed, so nothing rewritten). The commit's rows are then the
files the new version lists beyond the old one's, read as Parquet (partition folders as the base
of discovery) and cast to the table's schema. A table whose Parquet column names are not its own
(column mapping) is read whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import attrs
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as SF

from lineage_quality.engine.columns import quote

_APPENDS = {"WRITE": "mode", "STREAMING UPDATE": "outputMode"}


@attrs.frozen
class TableAppend:
    """A commit that appended: its version, the version before it, and the rows it added."""

    version: str
    before: str
    added: DataFrame
    files: int


def delta_append(
    spark: SparkSession, location: str, version: int, at: Callable[[str], DataFrame]
) -> TableAppend | None:
    """The rows Delta commit `version` of the table at `location` appended (`at(v)`: the table
    at version v), or None when it is not an append (module docstring)."""
    if version <= 0 or not _appended(spark, location, version):
        return None
    now, then = at(str(version)), at(str(version - 1))
    files_now, files_then = set(now.inputFiles()), set(then.inputFiles())
    if not files_then <= files_now:
        return None  # a file of the version before is gone: not an append
    added = sorted(files_now - files_then)
    if not added:
        return None
    frame = spark.read.option("basePath", location).parquet(*added)
    if set(frame.columns) != set(now.columns):
        return None  # column mapping (or a partition the paths do not spell): read whole
    typed = frame.select(*[SF.col(quote(f.name)).cast(f.dataType) for f in now.schema.fields])
    return TableAppend(str(version), str(version - 1), typed, len(added))


def _appended(spark: SparkSession, location: str, version: int) -> bool:
    """Whether Delta's history calls commit `version` an append."""
    jvm: Any = spark.sparkContext._jvm
    history = jvm.io.delta.tables.DeltaTable.forPath(spark._jsparkSession, location).history()
    rows = (
        DataFrame(history, spark)
        .where(SF.col("version") == version)
        .select("operation", "operationParameters")
        .collect()
    )
    if len(rows) != 1:
        return False
    operation, parameters = rows[0]["operation"], rows[0]["operationParameters"] or {}
    key = _APPENDS.get(str(operation))
    return key is not None and _word(parameters.get(key)) == "append"


def _word(value: Any) -> str:
    text = str(value or "")
    try:  # Delta keeps parameters as JSON text: "\"Append\""
        decoded = json.loads(text)
        text = decoded if isinstance(decoded, str) else text
    except ValueError:
        pass
    return text.strip().lower()

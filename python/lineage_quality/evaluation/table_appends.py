"""Which rows a Delta commit or an Iceberg snapshot appended, so that its verdict is judged on
them alone (evaluation/increments.py). I/O: reads the table's history and its file lists.

A commit is taken for an append only when Delta says so (its history's operation is a `WRITE`
in mode `Append`, or a `STREAMING UPDATE` in output mode `Append`) and the version before it
keeps every file it had (nothing removed, so nothing rewritten). The commit's rows are then the
files the new version lists beyond the old one's, read as Parquet (partition folders as the base
of discovery) and cast to the table's schema. A table whose Parquet column names are not its own
(column mapping) is read whole.

An Iceberg snapshot is taken for an append when its `operation` is `append`; its rows are the
data files its manifests list as ADDED by it (the `entries` metadata table), which must number
and hold what the snapshot's summary says it added (`added-data-files`, `added-records`), read
as Parquet and cast to the table's schema. Any other operation (overwrite, delete, replace: a
compaction), or a count that differs, and the snapshot is read whole.
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


def iceberg_append(
    spark: SparkSession, location: str, snapshot: str, at: Callable[[str], DataFrame]
) -> TableAppend | None:
    """The rows Iceberg snapshot `snapshot` of the table at `location` appended, or None when it
    is not a plain append (module docstring)."""
    if not snapshot.lstrip("-").isdigit():
        return None
    snaps = (
        spark.read.format("iceberg")
        .load(location + "#snapshots")
        .where(SF.col("snapshot_id") == int(snapshot))
        .select("parent_id", "operation", "summary")
        .collect()
    )
    if len(snaps) != 1 or snaps[0]["operation"] != "append" or snaps[0]["parent_id"] is None:
        return None
    summary = snaps[0]["summary"] or {}
    entries = (
        spark.read.format("iceberg")
        .load(location + "#entries")
        .where((SF.col("snapshot_id") == int(snapshot)) & (SF.col("status") == 1))
        .select("data_file.file_path", "data_file.record_count", "data_file.file_format")
        .collect()
    )
    files = [str(e["file_path"]) for e in entries]
    records = sum(int(e["record_count"]) for e in entries)
    if (
        not files
        or any(str(e["file_format"]).upper() != "PARQUET" for e in entries)
        or str(len(files)) != str(summary.get("added-data-files"))
        or str(records) != str(summary.get("added-records"))
    ):
        return None
    now = at(snapshot)
    frame = spark.read.parquet(*files)
    if not set(now.columns) <= set(frame.columns):
        return None  # a column renamed since the files were written: read whole
    typed = frame.select(*[SF.col(quote(f.name)).cast(f.dataType) for f in now.schema.fields])
    return TableAppend(snapshot, str(snaps[0]["parent_id"]), typed, len(files))


def iceberg_snapshot_at(spark: SparkSession, location: str, timestamp_ms: int) -> str | None:
    """The Iceberg snapshot current at `timestamp_ms` (the last committed at or before it)."""
    rows = (
        spark.read.format("iceberg")
        .load(location + "#snapshots")
        .where(SF.col("committed_at") <= SF.expr(f"timestamp_millis({int(timestamp_ms)})"))
        .orderBy(SF.col("committed_at").desc())
        .select("snapshot_id")
        .limit(1)
        .collect()
    )
    return str(rows[0]["snapshot_id"]) if rows else None


def iceberg_written_snapshot(
    spark: SparkSession, location: str, named: str, rows: int, until_ms: int | None
) -> str:
    """The snapshot a run that wrote `rows` rows made: `named` (the event's version facet)
    when its summary added that many, else the first of its descendants committed by the run's
    COMPLETE (`until_ms`) that did. The listener 1.53 names the snapshot before an append or a
    createOrReplace; `named` when none matches (the evaluation then says what it found)."""
    if not named.lstrip("-").isdigit():
        return named
    snaps = (
        spark.read.format("iceberg")
        .load(location + "#snapshots")
        .select("snapshot_id", "parent_id", "summary", SF.expr("unix_millis(committed_at)"))
        .collect()
    )
    children = {str(r["parent_id"]): r for r in snaps if r["parent_id"] is not None}
    by_id = {str(r["snapshot_id"]): r for r in snaps}
    current = by_id.get(named)
    while current is not None:
        if until_ms is not None and int(current[3]) > until_ms:
            break
        if str((current["summary"] or {}).get("added-records")) == str(rows):
            return str(current["snapshot_id"])
        current = children.get(str(current["snapshot_id"]))
    return named

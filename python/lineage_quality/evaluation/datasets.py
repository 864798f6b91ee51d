"""An OpenLineage dataset (namespace, name, facets) -> a Spark DataFrame to evaluate.

Naming follows the OpenLineage spec: `file` + `/abs/path`, `hdfs://host:port` + `/path`,
`s3://bucket` + `key` (read through `s3a://`), `gs://`, `abfss://...`. The storage format comes from
the contract's server (`format`), else the dataset's `storage` facet, else the files themselves.
"""

from __future__ import annotations

import datetime
import os
import posixpath
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from lineage_quality.contracts.binding import normalize_name, pattern_from_location
from lineage_quality.engine.run import short_error
from lineage_quality.errors import DatasetError
from lineage_quality.evaluation.parquet_schema import with_footer_schema
from lineage_quality.evaluation.spark_line import line_of
from lineage_quality.values.refs import table_identities

FORMATS = ("parquet", "orc", "csv", "json", "avro", "delta", "iceberg", "text")
VERSIONED = ("delta", "iceberg")  # formats read at a version (time travel)
_EXTENSIONS = {
    ".parquet": "parquet",
    ".orc": "orc",
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".avro": "avro",
}


def location_of(namespace: str, name: str) -> str:
    """The URI Spark reads for an OpenLineage dataset identity: the name normalized exactly as
    binding matched it, so what is read is what was bound."""
    normalized = normalize_name(namespace, name)
    if normalized is None:
        raise DatasetError(f"not a dataset name of namespace {namespace!r}: {name!r}")
    name = normalized
    if namespace == "file" or namespace.startswith("file:"):
        return name
    for scheme in ("s3://", "s3a://", "s3n://"):  # one store, read through Hadoop's s3a
        if namespace.startswith(scheme):
            return "s3a://" + namespace[len(scheme) :].rstrip("/") + "/" + name.lstrip("/")
    if "://" in namespace:
        return namespace.rstrip("/") + "/" + name.lstrip("/")
    raise DatasetError(f"don't know where dataset {namespace}:{name} is stored")


def _detect_local_format(path: str) -> str | None:
    p = Path(path)
    if (p / "_delta_log").is_dir():
        return "delta"
    if (p / "metadata").is_dir() and any((p / "metadata").glob("*.metadata.json")):
        return "iceberg"
    if p.is_file():
        return _EXTENSIONS.get(p.suffix.lower())
    if not p.is_dir():
        return None
    for root, _dirs, files in os.walk(p):
        if os.path.basename(root).startswith(("_", ".")) and root != str(p):
            continue
        for f in files:
            if f.startswith(("_", ".")):
                continue
            fmt = _EXTENSIONS.get(Path(f).suffix.lower())
            if fmt is None and f.endswith(".snappy.parquet"):
                fmt = "parquet"
            if fmt:
                return fmt
            for ext, name in _EXTENSIONS.items():  # part-0000.csv.gz, x.json.snappy, ...
                if ext + "." in f:
                    return name
    return None


def _facet_format(facets: Mapping[str, Any] | None) -> str | None:
    storage = (facets or {}).get("storage")
    if isinstance(storage, Mapping):
        layer = storage.get("storageLayer")  # a table format over the files comes first
        if isinstance(layer, str) and layer.lower() in VERSIONED:
            return layer.lower()
        fmt = storage.get("fileFormat")
        if isinstance(fmt, str) and fmt.lower() in FORMATS:
            return fmt.lower()
    return None


@attrs.frozen
class AsOf:
    """Which version of a versioned table to read: the version the event names, else the table
    as it was at `timestamp_ms` (the run's COMPLETE: its own commit is the last before it)."""

    version: str | None = None
    timestamp_ms: int | None = None

    def describe(self) -> str:
        if self.version is not None:
            return f"version {self.version}"
        when = datetime.datetime.fromtimestamp((self.timestamp_ms or 0) / 1000, datetime.UTC)
        return f"as of {when.isoformat(timespec='milliseconds')}"


def delta_version_at(spark: SparkSession, location: str, timestamp_ms: int) -> str:
    """The last Delta commit at or before the time (Delta's own `timestampAsOf` refuses a time
    after the latest commit, which is exactly the case of a run's own last write)."""
    jvm: Any = spark.sparkContext._jvm
    history = jvm.io.delta.tables.DeltaTable.forPath(spark._jsparkSession, location).history()
    rows = DataFrame(history, spark).select("version", "timestamp").collect()
    # PySpark gives timestamps as naive local datetimes: .timestamp() reads them as local time.
    found = [int(r["version"]) for r in rows if r["timestamp"].timestamp() * 1000 <= timestamp_ms]
    if not found:
        when = AsOf(None, timestamp_ms).describe()
        raise DatasetError(f"no version of the Delta table {location} existed {when}")
    return str(max(found))


def _time_travel(spark: SparkSession, reader: Any, fmt: str, location: str, as_of: AsOf) -> Any:
    if fmt == "delta":
        version = as_of.version
        if version is None:
            version = delta_version_at(spark, location, as_of.timestamp_ms or 0)
        return reader.option("versionAsOf", version)
    if line_of(spark.version).name == "3.5":
        if as_of.version is not None:
            return reader.option("snapshot-id", as_of.version)
        return reader.option("as-of-timestamp", str(as_of.timestamp_ms))
    # Iceberg's runtime for Spark 4 refuses its own options ("`snapshot-id` is no longer
    # supported"): Spark's time travel options, the time with its zone so the session's is moot.
    if as_of.version is not None:
        return reader.option("versionAsOf", as_of.version)
    when = datetime.datetime.fromtimestamp((as_of.timestamp_ms or 0) / 1000, datetime.UTC)
    return reader.option("timestampAsOf", when.isoformat(timespec="milliseconds"))


def read_dataset(
    spark: SparkSession,
    namespace: str,
    name: str,
    facets: Mapping[str, Any] | None = None,
    format_hint: str | None = None,
    as_of: AsOf | None = None,
    *,
    table: str | None = None,
    files: Sequence[str] | None = None,
    not_after_ms: int | None = None,
) -> DataFrame:
    """A lazy DataFrame over the dataset as storage has it now (nothing cached from an earlier
    read); raises DatasetError if it cannot be located or opened.

    - `table`: read through the session's catalog (its schema, partitions and format), after
      refreshing what the session cached of it; the caller has checked it is this dataset.
      `not_after_ms` then keeps only rows of files modified at or before that time.
    - `files`: read just these files of the dataset (the ones its run left), its folder as the
      base of partition discovery.
    - `as_of`: a Delta or Iceberg table at that version (time travel).
    """
    location = location_of(namespace, name)
    local = "://" not in location
    if table is not None and as_of is None:
        return _read_table(spark, table, not_after_ms)
    if local and not Path(location).exists():
        raise DatasetError(f"dataset path does not exist: {location}")
    fmt = (format_hint or "").lower() or _facet_format(facets)
    if not fmt and local:
        try:
            fmt = _detect_local_format(location)
        except OSError as exc:
            raise DatasetError(f"cannot read {location}: {exc.strerror or exc}") from exc
    fmt = fmt or "parquet"
    if fmt not in FORMATS:
        raise DatasetError(f"unsupported format {fmt!r} for {location}; supported: {FORMATS}")
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    at = ""
    if fmt in VERSIONED and as_of is not None:
        try:
            reader = _time_travel(spark, reader, fmt, location, as_of)
        except DatasetError:
            raise
        except Exception as exc:
            text = str(exc).strip().splitlines()
            raise DatasetError(
                f"cannot find the version of {location} {as_of.describe()}: "
                f"{text[0] if text else exc}"
            ) from exc
        at = f" at {as_of.describe()}"
    try:
        if files is not None and fmt not in VERSIONED:
            if not files:
                raise DatasetError(f"no file of {location} to read")
            base = None
            if list(files) != [location]:
                reader = reader.option("basePath", location)
                base = location
            if fmt == "parquet":
                reader = with_footer_schema(spark, reader, files, base)
            return reader.load(list(files))
        if fmt == "parquet" and as_of is None:
            reader = with_footer_schema(spark, reader, [location], None)
        return reader.load(location)
    except DatasetError:
        raise
    except Exception as exc:
        raise DatasetError(f"cannot read {location} as {fmt}{at}: {short_error(exc)}") from exc


def quoted_table(table: str) -> str:
    """`db.table` as a quoted SQL identifier (each part in backticks): a name from a contract or
    an event is never read as SQL."""
    parts = [p.strip().strip("`") for p in table.strip().split(".")]
    return ".".join("`" + p.replace("`", "``") + "`" for p in parts)


def _read_table(spark: SparkSession, table: str, not_after_ms: int | None) -> DataFrame:
    ident = quoted_table(table)
    try:
        # A long-lived evaluator: another application may have written the table since this
        # session last read it; the session's cached relation and file listing would hide that.
        spark.catalog.refreshTable(ident)
        df = spark.table(ident)
    except Exception as exc:
        raise DatasetError(f"table {table} cannot be read: {short_error(exc)}") from exc
    if not_after_ms is None:
        return df
    try:
        when = F.expr(f"timestamp_millis({int(not_after_ms)})")
        return df.where(F.col("_metadata.file_modification_time") <= when)
    except Exception as exc:
        raise DatasetError(
            f"table {table} has files written after the run's completion, and it cannot be read "
            f"without them (no file metadata column: {short_error(exc)})"
        ) from exc


def catalog_location(spark: SparkSession, table: str) -> str | None:
    """Where the session's catalog keeps `table` (its `Location`), None when the catalog does
    not know it (or it has no location: a view)."""
    try:
        if not spark.catalog.tableExists(table):
            return None
        rows = spark.sql(f"DESCRIBE TABLE EXTENDED {quoted_table(table)}").collect()
    except Exception:
        return None
    for row in rows:
        if str(row[0]).strip() == "Location" and row[1]:
            return str(row[1]).strip()
    return None


def same_location(a: str, b: str) -> bool:
    """Whether two locations name one folder: `file:/x`, `file:///x` and `/x` alike, the s3
    schemes alike (`s3`, `s3a`, `s3n`), a trailing slash ignored."""
    return _location_key(a) == _location_key(b)


def _location_key(location: str) -> str:
    text = location.strip()
    if text.startswith("file:"):
        text = text[len("file:") :]
        if text.startswith("//"):
            text = text[2:]
    scheme, sep, rest = text.partition("://")
    if sep:
        scheme = scheme.lower()
        if scheme in ("s3a", "s3n"):
            scheme = "s3"
        return f"{scheme}://{posixpath.normpath('/' + rest).lstrip('/')}"
    return posixpath.normpath(text)


def table_format(
    namespace: str, name: str, facets: Mapping[str, Any] | None, format_hint: str | None
) -> str | None:
    """`delta` or `iceberg` for a table format's dataset (read at a version), else None."""
    fmt = (format_hint or "").lower() or _facet_format(facets)
    if not fmt:
        try:
            location = location_of(namespace, name)
            fmt = _detect_local_format(location) if "://" not in location else None
        except (DatasetError, OSError):
            return None
    return fmt if fmt in VERSIONED else None


def is_versioned(
    namespace: str, name: str, facets: Mapping[str, Any] | None, format_hint: str | None
) -> bool:
    """Whether the dataset is a Delta or Iceberg table (read at a version)."""
    return table_format(namespace, name, facets, format_hint) is not None


def escaped_binding(location: str, bound: Callable[[str], bool]) -> str | None:
    """Why a local dataset may not be read under its binding, or None: its real path (symlinks
    resolved) must still be bound (`bound(real_path)`), and no link inside its folder may lead
    outside it -- otherwise `lake/link -> /private` would let `lake/*` read `/private`."""
    if "://" in location or not os.path.lexists(location):
        return None
    real = os.path.realpath(location)
    if real != location and not bound(real):
        return f"{location} resolves to {real}, which its binding does not cover"
    if not os.path.isdir(real):
        return None
    for root, dirs, files in os.walk(real):
        for entry in [*dirs, *files]:
            path = os.path.join(root, entry)
            if not os.path.islink(path):
                continue
            target = os.path.realpath(path)
            if os.path.commonpath([real, target]) != real and not bound(target):
                return f"{path} links to {target}, outside the bound dataset"
    return None


# Schemes of storage: a `symlinks` namespace of one of them is where the catalog keeps its tables
# (a warehouse folder, a bucket). Any other (`hive://host:port`, `arn:aws:glue:...`) names the
# catalog itself: a table identity, not a location.
_STORAGE_SCHEMES = frozenset(
    {"file", "s3", "s3a", "s3n", "gs", "hdfs", "abfs", "abfss", "wasb", "wasbs", "adl", "oss"}
)


def is_storage_namespace(namespace: str) -> bool:
    return namespace.split(":", 1)[0].lower() in _STORAGE_SCHEMES


def outside_table_location(
    namespace: str, location: str, facets: Mapping[str, Any] | None
) -> str | None:
    """For a dataset bound by its table identity, read from the event's location (the evaluator's
    catalog does not know the table): why that path is not where the table's catalog keeps it
    (the `symlinks` identifier's namespace: a warehouse folder or a bucket), or None. Without this
    an event could pair a bound table name with any path. A catalog namespace
    (`hive://host:port`) says nothing of where the table lies: such a table is read only
    through the evaluator's own catalog."""
    roots: list[str] = []
    catalogs: list[str] = []
    for root, _name in table_identities(facets):
        (roots if is_storage_namespace(root) else catalogs).append(root)
    for root in roots:
        if root.startswith("file:") and "://" not in root:
            base = posixpath.normpath(root[len("file:") :])
            if posixpath.commonpath([base, posixpath.normpath(location)]) == base:
                return None
        elif "://" in root and same_location(root, namespace):
            return None
    if catalogs and not roots:
        hints = ", ".join(_catalog_hint(c) for c in catalogs)
        return (
            f"its table is named by the catalog {', '.join(catalogs)}, a table identity rather "
            f"than a location, and the evaluator's catalog does not know the table: give the "
            f"evaluator the same metastore ({hints}; docs/evaluation.md, Hive metastore)"
        )
    return f"{location} is not inside the location of its table ({', '.join(roots) or 'none'})"


def _catalog_hint(namespace: str) -> str:
    if namespace.startswith("hive://"):
        return (
            "--spark-conf spark.sql.catalogImplementation=hive --spark-conf "
            f"spark.hadoop.hive.metastore.uris=thrift://{namespace[len('hive://') :]}"
        )
    return f"a catalog configured for {namespace}"


def dataset_identity(location: str) -> tuple[str, str]:
    """(namespace, name) OpenLineage would give a path or URI; relative paths made absolute."""
    path = location[len("file://") :] if location.startswith("file://") else location
    if "://" not in path:
        path = str(Path(path).resolve())
    pattern = pattern_from_location(path)
    return pattern.namespace, pattern.name


def read_location(spark: SparkSession, location: str, format_hint: str | None = None) -> DataFrame:
    """A DataFrame over a path or URI given by a user (`lineage-quality check --dataset`)."""
    return read_dataset(spark, *dataset_identity(location), None, format_hint)

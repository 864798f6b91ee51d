"""An OpenLineage dataset (namespace, name, facets) -> a Spark DataFrame to evaluate.

Naming follows the OpenLineage spec: `file` + `/abs/path`, `hdfs://host:port` + `/path`,
`s3://bucket` + `key` (read through `s3a://`), `gs://`, `abfss://...`. The storage format comes from
the contract's server (`format`), else the dataset's `storage` facet, else the files themselves.
"""

from __future__ import annotations

import datetime
import os
import posixpath
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
from pyspark.sql import DataFrame, SparkSession

from lineage_quality.contracts.binding import normalize_name, pattern_from_location
from lineage_quality.engine.run import short_error
from lineage_quality.errors import DatasetError

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
    if namespace.startswith("s3://"):
        return "s3a://" + namespace[len("s3://") :].rstrip("/") + "/" + name.lstrip("/")
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


def _delta_version_at(spark: SparkSession, location: str, timestamp_ms: int) -> str:
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
            version = _delta_version_at(spark, location, as_of.timestamp_ms or 0)
        return reader.option("versionAsOf", version)
    if as_of.version is not None:
        return reader.option("snapshot-id", as_of.version)
    return reader.option("as-of-timestamp", str(as_of.timestamp_ms))


def table_names(facets: Mapping[str, Any] | None) -> list[str]:
    """The catalog table identities of a dataset (its `symlinks` facet, type TABLE)."""
    symlinks = (facets or {}).get("symlinks")
    names: list[str] = []
    if isinstance(symlinks, Mapping):
        for ident in symlinks.get("identifiers") or []:
            if isinstance(ident, Mapping) and ident.get("type") == "TABLE":
                name = ident.get("name")
                if isinstance(name, str) and name:
                    names.append(name)
    return names


def _table_name(facets: Mapping[str, Any] | None) -> str | None:
    names = table_names(facets)
    return names[0] if names else None


def read_dataset(
    spark: SparkSession,
    namespace: str,
    name: str,
    facets: Mapping[str, Any] | None = None,
    format_hint: str | None = None,
    as_of: AsOf | None = None,
) -> DataFrame:
    """A lazy DataFrame over the dataset; raises DatasetError if it cannot be located or opened.
    A Delta or Iceberg table is read at `as_of` (time travel) when given."""
    location = location_of(namespace, name)
    local = "://" not in location
    table = _table_name(facets)
    if table and _catalog_knows(spark, table) and as_of is None:
        # Through the catalog (a shared metastore, see --spark-conf): its schema, partitions
        # and format, as the job saw them.
        try:
            return spark.table(table)
        except Exception as exc:
            raise DatasetError(f"table {table} cannot be read: {exc}") from exc
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
        return reader.load(location)
    except Exception as exc:
        raise DatasetError(f"cannot read {location} as {fmt}{at}: {short_error(exc)}") from exc


def is_versioned(
    namespace: str, name: str, facets: Mapping[str, Any] | None, format_hint: str | None
) -> bool:
    """Whether the dataset is a Delta or Iceberg table (read at a version)."""
    fmt = (format_hint or "").lower() or _facet_format(facets)
    if not fmt:
        try:
            location = location_of(namespace, name)
            fmt = _detect_local_format(location) if "://" not in location else None
        except (DatasetError, OSError):
            return False
    return fmt in VERSIONED


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


def outside_table_location(
    namespace: str, location: str, facets: Mapping[str, Any] | None
) -> str | None:
    """For a dataset bound by its table identity: why its path is not where its catalog keeps
    the table (the `symlinks` identifier's namespace: a warehouse folder or a bucket), or None.
    Without this an event could pair a bound table name with any path."""
    symlinks = (facets or {}).get("symlinks")
    roots = []
    if isinstance(symlinks, Mapping):
        for ident in symlinks.get("identifiers") or []:
            if isinstance(ident, Mapping) and ident.get("type") == "TABLE":
                roots.append(str(ident.get("namespace") or ""))
    for root in roots:
        if root.startswith("file:") and "://" not in root:
            base = posixpath.normpath(root[len("file:") :])
            if posixpath.commonpath([base, posixpath.normpath(location)]) == base:
                return None
        elif "://" in root and root.rstrip("/") == namespace.rstrip("/"):
            return None
    return f"{location} is not inside the location of its table ({', '.join(roots) or 'none'})"


def _catalog_knows(spark: SparkSession, table: str) -> bool:
    try:
        return bool(spark.catalog.tableExists(table))
    except Exception:
        return False


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

"""Which OpenLineage datasets a contract's schema object applies to."""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Sequence

import attrs

from lineage_quality.rules import Rule
from lineage_quality.samples import SamplePolicy


def normalize_name(namespace: str, name: str) -> str | None:
    """The dataset name as it will be read: `.`, `..` and repeated slashes resolved, for every
    namespace. None when the name is not a name of that namespace at all, so it can never be
    bound or read: it carries a scheme of its own (an event naming `hdfs://host/...` under `file`
    must not make the producer connect to that host), or `..` climbs above the root."""
    if "://" in name or name.startswith("//") or "\x00" in name:
        return None
    if namespace == "file" or namespace.startswith("file:"):
        if not name.startswith("/"):
            return None  # the spec's file names are absolute paths
        return posixpath.normpath(name).replace("//", "/")
    # s3://bucket + key, hdfs://host:port + /path, ...: resolve within the namespace's root.
    rooted = "/" + name.lstrip("/")
    parts: list[str] = []
    for part in rooted.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None  # above the bucket / filesystem root
            parts.pop()
            continue
        parts.append(part)
    joined = "/".join(parts)
    return "/" + joined if name.startswith("/") else joined


@attrs.frozen
class DatasetPattern:
    """An OpenLineage dataset identity, with shell-style globs (`*`, `?`, `[...]`) allowed.

    `*` also matches `/`, so `*/clean` matches `/any/depth/clean`. The namespace is compared
    exactly (but for `canonical_namespace`: `s3a://lake` is `s3://lake`) unless the contract
    wrote a glob in it; the event's name is normalized first
    (`normalize_name`), so `raw/../finance/x` is matched (and read) as `finance/x`.
    """

    namespace: str
    name: str

    def matches(self, namespace: str, name: str) -> bool:
        namespace = canonical_namespace(namespace)
        wanted = canonical_namespace(self.namespace)
        if _has_glob(wanted):
            if not fnmatch.fnmatchcase(namespace, wanted):
                return False
        elif namespace.rstrip("/") != wanted.rstrip("/"):
            return False
        normalized = normalize_name(namespace, name)
        if normalized is None:
            return False
        return fnmatch.fnmatchcase(_trim(normalized), _trim(_pattern_name(self.name)))


# Schemes that name one store: the listener names an `s3a://` write `s3://bucket`, and contracts
# are written with either.
_SAME_STORE = {"s3a": "s3", "s3n": "s3"}


def canonical_namespace(namespace: str) -> str:
    """The namespace with its scheme lower-cased and the s3 schemes (`s3`, `s3a`, `s3n`) as `s3`:
    the same store binds alike whichever name a job or a contract used."""
    scheme, sep, rest = namespace.partition("://")
    if not sep:
        return namespace
    scheme = scheme.lower()
    return f"{_SAME_STORE.get(scheme, scheme)}://{rest}"


def _has_glob(text: str) -> bool:
    return any(ch in text for ch in "*?[")


def _pattern_name(name: str) -> str:
    return posixpath.normpath(name) if name.startswith("/") else name


def _trim(name: str) -> str:
    # Spark reports directories without a trailing slash; contracts are written either way.
    return name.rstrip("/") if len(name) > 1 else name


@attrs.frozen
class BoundRules:
    """The rules of one schema object and the datasets they bind to."""

    contract: str  # contract id (or file name) for messages and DataHub properties
    object_name: str
    patterns: tuple[DatasetPattern, ...]
    rules: tuple[Rule, ...]
    format: str | None = None  # storage format hint from the contract's server, if any
    source: str = ""  # file and key the rules come from, for messages
    tables: tuple[str, ...] = ()  # catalog table identities (`db.table`), matched via symlinks
    # The contract asks for the profile: every column's cheap metrics in the same scan, for
    # `dataQualityMetrics` (engine.plan.profile_metrics; docs/metrics.md).
    profile: bool = False
    # What an append's verdicts judge: `table` (merged states), `write` (the run's rows only),
    # `exact` (the table read whole); ODCS `lineageQuality.scope` (docs/evaluation.md).
    scope: str = "table"
    # The dataset is critical (ODCS `tags: [critical]` on the contract or the schema object): a
    # BLOCK failure upstream reaching it alerts once (docs/lineage.md, "Alerts").
    critical: bool = False
    # Its failing-row samples: rows per rule, key columns, the columns masked (ODCS
    # classification, pii), whether they may travel in facets (contracts/odcs_samples.py).
    samples: SamplePolicy = attrs.field(factory=SamplePolicy)

    def matches(self, namespace: str, name: str) -> bool:
        return any(p.matches(namespace, name) for p in self.patterns)

    def matches_table(self, tables: Sequence[str]) -> bool:
        wanted = {table_key(t) for t in self.tables}
        return any(table_key(t) in wanted for t in tables)


def table_key(name: str) -> str:
    """`spark_catalog.default.Orders`, `default.orders` and `orders` name one table: Spark's
    session catalog and its `default` database are implied (as in Spark SQL), and identifiers
    are case-insensitive."""
    parts = [p.strip("`") for p in name.strip().lower().split(".")]
    if len(parts) == 3 and parts[0] == "spark_catalog":
        parts = parts[1:]
    if len(parts) == 1:
        parts = ["default", *parts]
    return ".".join(parts)


def rules_for(
    bindings: Sequence[BoundRules], namespace: str, name: str, tables: Sequence[str] = ()
) -> list[BoundRules]:
    return [b for b in bindings if b.matches(namespace, name) or b.matches_table(tables)]


def pattern_from_location(location: str) -> DatasetPattern:
    """OpenLineage naming for a storage location: `s3://bucket/key` -> (`s3://bucket`, `key`),
    a local path -> (`file`, `/abs/path`). A trailing file glob (`*.parquet`) names the folder."""
    loc = location.strip()
    if "://" in loc:
        scheme, rest = loc.split("://", 1)
        if scheme == "file":
            return pattern_from_location(rest)
        authority, _, path = rest.partition("/")
        return DatasetPattern(f"{scheme}://{authority}", _strip_file_glob(path))
    return DatasetPattern("file", _strip_file_glob(loc))


def _strip_file_glob(path: str) -> str:
    last = posixpath.basename(path.rstrip("/"))
    if any(ch in last for ch in "*?[") and "." in last:
        return posixpath.dirname(path.rstrip("/"))
    return path

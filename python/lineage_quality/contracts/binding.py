"""Which OpenLineage datasets a contract's schema object applies to."""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Sequence

import attrs

from lineage_quality.rules import Rule


@attrs.frozen
class DatasetPattern:
    """An OpenLineage dataset identity, with shell-style globs (`*`, `?`, `[...]`) allowed.

    `*` also matches `/`, so `*/clean` matches `/any/depth/clean`.
    """

    namespace: str
    name: str

    def matches(self, namespace: str, name: str) -> bool:
        return fnmatch.fnmatchcase(namespace, self.namespace) and fnmatch.fnmatchcase(
            _normalize(name), _normalize(self.name)
        )


def _normalize(name: str) -> str:
    # Spark reports directories without a trailing slash; contracts are written either way.
    # `..` is resolved, so `/data/../etc` never matches a binding of `/data/*`.
    if name.startswith("/"):
        return posixpath.normpath(name)
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

    def matches(self, namespace: str, name: str) -> bool:
        return any(p.matches(namespace, name) for p in self.patterns)


def rules_for(bindings: Sequence[BoundRules], namespace: str, name: str) -> list[BoundRules]:
    return [b for b in bindings if b.matches(namespace, name)]


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

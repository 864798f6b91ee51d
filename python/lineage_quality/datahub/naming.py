"""OpenLineage dataset (namespace, name, symlinks) -> DataHub dataset (platform, name, env).

The same rules as DataHub's own OpenLineage converter (the Java `OpenLineageToDataHub` /
`OpenLineagePlatformResolver` / `HdfsPathDataset` behind GMS's `/openapi/openlineage` endpoint
and the Spark plugin), so that assertions land on the datasets the lineage created:

- a namespace without `://` is the platform: (`file`, `/data/x`) -> platform `file`, name `/data/x`;
  (`bigquery`, `p.d.t`) -> `bigquery`, `p.d.t`;
- with `://`, the URI scheme is the platform (`awsathena` -> `athena`, `sqlserver` -> `mssql`) and
  the name stays as it is: (`postgres://db:5432`, `shop.public.orders`) -> `postgres`,
  `shop.public.orders`;
- file systems (`s3`, `s3a`, `s3n`, `gs`, `gcs`, `abfs(s)`, `wasb(s)`, `dbfs`, `file` schemes) are
  named by their path: `s3a://bucket` + `raw/orders/` -> `s3`, `bucket/raw/orders`;
  `gs://b` + `x` -> `gcs`, `b/x`; `file:///data/x` -> `file`, `/data/x` (file keeps its slash);
- a `symlinks` facet identifier of type TABLE wins (the table a path belongs to): a Glue ARN
  namespace -> platform `glue`, any other -> the Hive alias (`hive`); `table/db/t` -> `db.t`;
- the platform instance, when set, prefixes the name (`instance.name`), as in every DataHub URN.

Not mirrored: GMS `path-specs` and `connections` (application.yml only), the
`file-partition-regexp-pattern` and the converter's in-memory URN aliases.
Pure: no I/O, no `acryl-datahub` import.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from lineage_quality.datahub.config import DEFAULT_NAMING, NamingConfig

# URI scheme -> DataHub platform for file systems (named by their path).
FS_PLATFORMS: Mapping[str, str] = {
    "s3": "s3",
    "s3a": "s3",
    "s3n": "s3",
    "gs": "gcs",
    "gcs": "gcs",
    "abfs": "abs",
    "abfss": "abs",
    "wasb": "abs",
    "wasbs": "abs",
    "dbfs": "dbfs",
    "file": "file",
}
# URI schemes whose DataHub platform has another name.
SCHEME_PLATFORMS: Mapping[str, str] = {"awsathena": "athena", "sqlserver": "mssql"}
DEFAULT_FS_PLATFORM = "hdfs"  # a path URI whose scheme cannot be split off

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_TABLE_PREFIX = "table/"


@attrs.frozen
class DatasetName:
    """A DataHub dataset identity; `name` already carries the platform instance prefix."""

    platform: str
    name: str
    env: str


def _fs_name(uri: str) -> tuple[str, str]:
    path_uri = uri.rstrip("/")
    parts = path_uri.split("://")
    while parts and parts[-1] == "":  # Java's split drops trailing empty strings
        parts.pop()
    if len(parts) != 2:
        return DEFAULT_FS_PLATFORM, path_uri
    platform = FS_PLATFORMS.get(parts[0], DEFAULT_FS_PLATFORM)
    rest = parts[1]
    if platform == "file":
        return platform, rest
    return platform, rest[1:] if rest.startswith("/") else rest


def platform_and_name(
    namespace: str, name: str, lower_case: bool = False
) -> tuple[str, str] | None:
    """(platform, name) of an OpenLineage dataset; None when its URI has no valid scheme."""
    if lower_case:
        namespace, name = namespace.lower(), name.lower()
    if "://" not in namespace and "://" not in name:
        return namespace, name
    if "://" not in namespace:
        uri = name  # older payloads: platform-like namespace, full URI in the name
    elif not namespace.endswith("/") and not name.startswith("/"):
        uri = f"{namespace}/{name}"
    else:
        uri = namespace + name
    match = _SCHEME.match(uri)
    if match is None:
        return None
    scheme = match.group(1)
    platform = SCHEME_PLATFORMS.get(scheme, scheme)
    if platform in FS_PLATFORMS:
        return _fs_name(uri)
    return platform, name


def _table_symlink(facets: Mapping[str, Any] | None, hive_alias: str) -> tuple[str, str] | None:
    symlinks = facets.get("symlinks") if isinstance(facets, Mapping) else None
    identifiers = symlinks.get("identifiers") if isinstance(symlinks, Mapping) else None
    found: tuple[str, str] | None = None
    for ident in identifiers if isinstance(identifiers, list) else []:
        if not isinstance(ident, Mapping) or ident.get("type") != "TABLE":
            continue
        ns, nm = ident.get("namespace"), ident.get("name")
        if not isinstance(ns, str) or not isinstance(nm, str):
            continue
        platform = "glue" if ns.startswith(("aws:glue:", "arn:aws:glue:")) else hive_alias
        if nm.startswith(_TABLE_PREFIX):
            nm = nm[len(_TABLE_PREFIX) :].replace("/", ".")
        found = (platform, nm)  # the last TABLE identifier wins, as in DataHub
    return found


def dataset_name(
    namespace: str,
    name: str,
    facets: Mapping[str, Any] | None = None,
    config: NamingConfig = DEFAULT_NAMING,
) -> DatasetName | None:
    """The DataHub dataset an OpenLineage dataset becomes; None if DataHub cannot name it."""
    resolved: tuple[str, str] | None = None
    if config.resolve_symlinks:
        table = _table_symlink(facets, config.hive_platform_alias)
        if table is not None:
            resolved = platform_and_name(table[0], table[1], config.lower_case_urns)
    if resolved is None:
        resolved = platform_and_name(namespace, name, config.lower_case_urns)
    if resolved is None or not resolved[0] or not resolved[1]:
        return None
    platform, ds_name = resolved
    if config.platform_instance:
        ds_name = f"{config.platform_instance}.{ds_name}"
    return DatasetName(platform=platform, name=ds_name, env=config.env.upper())

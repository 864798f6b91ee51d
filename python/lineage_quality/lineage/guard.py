"""What the in-driver upstream guard refuses to read (`attach(..., upstream="block")`). Pure.

The engine jar's check rule (`lineagequality.UpstreamGuard`, through `spark.sql.extensions`)
fails the analysis of a query that reads an unhealthy dataset. It reads a health file this
module writes the lines of, one per way the dataset can be read:

    path<TAB>file:/lake/raw<TAB>message      its location (and anything under it)
    table<TAB>sales.orders<TAB>message       a catalog table identity of it (`symlinks`)

A dataset is unhealthy when its latest write failed a rule or was marked from upstream (the
model's `Write.healthy`); the message names the dataset, the first rule or mark, the write's run
and time, and the gate command that says more.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from lineage_quality.inert import inert
from lineage_quality.lineage.gate import describe, when
from lineage_quality.lineage.model import Failure, Mark, Write

# `host[:port]:name` after the scheme: the facets' `namespace:name` of a URL-named dataset
_AUTHORITY = re.compile(r"^([^/:]+(?::\d+)?):(.*)$", re.DOTALL)
_UNSAFE = re.compile(r"[\t\r\n\x00-\x1f\x7f]")


def locations(dataset: str) -> list[str]:
    """The URIs a dataset named `namespace:name` is read at: `file:/lake/raw` for
    `file:/lake/raw`, `s3://bucket/lake/raw` for `s3://bucket:lake/raw`,
    `hdfs://nn:8020/lake/raw` for `hdfs://nn:8020:/lake/raw`. None for a name that is no
    location (a catalog's `hive://...` table, a logical name)."""
    if dataset.startswith("file:") and not dataset.startswith("file://"):
        return [dataset]
    scheme, sep, rest = dataset.partition("://")
    if not sep or scheme in ("hive", "postgres", "postgresql", "mysql", "jdbc"):
        return []
    found = _AUTHORITY.match(rest)
    if found is None:
        return []
    authority, name = found.group(1), found.group(2)
    if not name:
        return []
    return [f"{scheme}://{authority}{'' if name.startswith('/') else '/'}{name}"]


def message(write: Write) -> str:
    """The refusal's text: dataset, the first issue (and how many more), the write's run."""
    issues: list[Failure | Mark] = [*write.failures, *write.marks]
    first = describe(issues[0]) if issues else "unhealthy"
    more = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
    version = f", version {write.version}" if write.version else ""
    return (
        f"{write.dataset}: {first}{more} [write of run {write.run} at {when(write.event_ms)}"
        f"{version}]; see `lineage-quality gate --dataset {write.dataset}`"
    )


def _field(text: str) -> str:
    """A location or table of a line: no tab or line break (the file's separators)."""
    return _UNSAFE.sub(" ", text)


def lines(unhealthy: Iterable[Write]) -> list[str]:
    """The health file's lines for these unhealthy writes (one dataset's latest each)."""
    out: list[str] = []
    for write in unhealthy:
        text = inert(_field(message(write)))  # it reaches the job's terminal
        for uri in locations(write.dataset):
            out.append(f"path\t{_field(uri)}\t{text}")
        for table in write.tables:
            out.append(f"table\t{_field(table.lower())}\t{text}")
    return out

"""What an event says a run wrote, and whether the data found is still that.

A verdict on an output describes the data the run wrote. For a plain-file dataset (no table
format, no version) the listener's `outputStatistics` facet (rows, bytes, files) and its
`lifecycleStateChange` (OVERWRITE / CREATE: the dataset is exactly what the run wrote) let the
producer notice that the data changed after the run -- another write to the same path -- and
report an ERROR saying so instead of another run's numbers. Pure but for the local file listing.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping
from typing import Any

import attrs

from lineage_quality.datasets import AsOf
from lineage_quality.errors import DatasetError
from lineage_quality.producer.enrich import DatasetRef
from lineage_quality.producer.rawjson import JsonNumber

# The dataset afterwards holds exactly what the run wrote.
_REPLACING = frozenset({"OVERWRITE", "CREATE"})


@attrs.frozen
class Written:
    """The run's own account of an output it wrote."""

    run_id: str
    rows: int | None
    size: int | None
    files: int | None
    replaced: bool  # OVERWRITE / CREATE: nothing else is in the dataset
    version: str | None  # the dataset version facet, when the format has versions


def _int(value: Any) -> int | None:
    if isinstance(value, JsonNumber):  # events re-emitted as received keep numbers as text
        try:
            return int(value.text)
        except ValueError:
            return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.text if isinstance(value, JsonNumber) else str(value)


def _facet(dataset: Mapping[str, Any], group: str, name: str) -> Mapping[str, Any]:
    facets = dataset.get(group)
    facet = facets.get(name) if isinstance(facets, Mapping) else None
    return facet if isinstance(facet, Mapping) else {}


def written(event: Mapping[str, Any], ref: DatasetRef) -> Written | None:
    """The run's account of output `ref`, None for inputs."""
    if ref.role != "outputs":
        return None
    dataset = event["outputs"][ref.index]
    stats = _facet(dataset, "outputFacets", "outputStatistics")
    lifecycle = _facet(dataset, "facets", "lifecycleStateChange").get("lifecycleStateChange")
    version = _facet(dataset, "facets", "version").get("datasetVersion")
    run = event.get("run") or {}
    return Written(
        run_id=str(run.get("runId", "")),
        rows=_int(stats.get("rowCount")),
        size=_int(stats.get("size")),
        files=_int(stats.get("fileCount")),
        replaced=lifecycle in _REPLACING,
        version=_text(version),
    )


def evaluation_key(event: Mapping[str, Any], ref: DatasetRef) -> tuple[Any, ...]:
    """One evaluation per (run, dataset, version). The listener reports one `saveAsTable` as two
    runs of the same Spark application (a CTAS and an insert), each with a COMPLETE: for outputs
    the run is the application run (the `parent` facet) and the write is told apart from the
    application's other writes to the same dataset by its version, else its statistics."""
    run = event.get("run") or {}
    run_id = str(run.get("runId", ""))
    if ref.role == "inputs":
        dataset = event["inputs"][ref.index]
        version = _text(_facet(dataset, "facets", "version").get("datasetVersion"))
        return ("inputs", run_id, ref.namespace, ref.name, version)
    parent = (run.get("facets") or {}).get("parent") or {}
    parent_run = (parent.get("run") or {}).get("runId") if isinstance(parent, Mapping) else None
    account = written(event, ref)
    assert account is not None
    if account.version is None and account.rows is None and account.size is None:
        return ("outputs", run_id, ref.namespace, ref.name)  # nothing tells writes apart
    # The statistics too: two events naming one version with different statistics (the
    # listener may name the snapshot before the write) are not the same write.
    identity = (account.version, account.rows, account.size, account.files)
    return ("outputs", parent_run or run_id, ref.namespace, ref.name, identity)


def listing_change(location: str, account: Written) -> str | None:
    """Why a local dataset's files are not the ones the run wrote (bytes or file count differ
    from its statistics), or None. Only for datasets the run replaced as a whole."""
    if not account.replaced or "://" in location:
        return None
    if account.size is None and account.files is None:
        return None
    if not os.path.isdir(location):
        sizes = [os.path.getsize(location)] if os.path.isfile(location) else []
    else:
        sizes = []
        for root, dirs, files in os.walk(location):
            dirs[:] = [d for d in dirs if not d.startswith(("_", "."))]
            sizes.extend(
                os.path.getsize(os.path.join(root, f))
                for f in files
                if not f.startswith(("_", "."))
            )
    if account.files is not None and len(sizes) != account.files:
        return f"run {account.run_id} wrote {account.files} file(s), found {len(sizes)}"
    if account.size is not None and sum(sizes) != account.size:
        return f"run {account.run_id} wrote {account.size} bytes, found {sum(sizes)}"
    return None


def rows_change(account: Written, found: int | None) -> str | None:
    """Why the rows evaluated are not the rows the run wrote, or None."""
    if not account.replaced or account.rows is None or found is None or found == account.rows:
        return None
    return f"run {account.run_id} wrote {account.rows} rows, found {found}"


def changed_message(location: str, why: str, as_of: AsOf | None = None) -> str:
    if as_of is not None:
        return (
            f"the table {location} {as_of.describe()} is not what the run wrote ({why}): "
            "these rules were not evaluated on it"
        )
    return (
        f"dataset changed after the run wrote it ({why}): {location} now holds other data, "
        "so these rules were not evaluated on what the run wrote"
    )


def version_read(event: Mapping[str, Any], ref: DatasetRef) -> AsOf:
    """The version of a Delta/Iceberg dataset this run read or wrote: the one its `version` facet
    names, else the table as of the COMPLETE event's time (the run's own commit is the last one
    before it, whatever was written after). Which one it was is checked afterwards against the
    run's `outputStatistics` where the listener sends them: the listener 1.53 sometimes names the
    snapshot before the write, or reports a write before its commit."""
    dataset = event[ref.role][ref.index]
    version = _text(_facet(dataset, "facets", "version").get("datasetVersion"))
    if version is not None:
        return AsOf(version=version)
    when = event.get("eventTime")
    try:
        parsed = datetime.datetime.fromisoformat(str(when))
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        if version is not None:
            return AsOf(version=version)
        raise DatasetError(
            f"cannot tell which version of the table run {(event.get('run') or {}).get('runId')} "
            f"wrote: no version facet and no usable eventTime ({when!r})"
        )
    return AsOf(timestamp_ms=int(parsed.timestamp() * 1000))

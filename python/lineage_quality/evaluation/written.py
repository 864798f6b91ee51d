"""What an event says a run wrote, and whether the data found is still that. Pure.

A verdict on an output describes the data the run left. For a plain-file dataset (no table
format, no version) that is the files modified at or before the run's COMPLETE: files written
after it are another write's and are not read (`left_by_run`). Those files are then checked
against the listener's `outputStatistics` (rows, bytes, files): after a replacing write
(`lifecycleStateChange` OVERWRITE / CREATE) they must be exactly what it wrote; after any other
write (the default ErrorIfExists, append, Ignore, INSERT, insertInto, which the listener 1.53
sends without a lifecycle state) they must hold at least what it wrote. Otherwise the data was
removed or replaced since, and every rule is an ERROR saying so instead of another run's numbers.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from lineage_quality.errors import DatasetError
from lineage_quality.evaluation.datasets import AsOf
from lineage_quality.evaluation.storage import StoredFile
from lineage_quality.values.event import Event, int_of
from lineage_quality.values.refs import DatasetRef

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


def written(event: Event | Mapping[str, Any], ref: DatasetRef) -> Written | None:
    """The run's account of output `ref`, None for inputs."""
    if ref.role != "outputs":
        return None
    event = Event.of(event)
    dataset = event.dataset(ref)
    stats = dataset.role_facet("outputStatistics")
    lifecycle = dataset.facet("lifecycleStateChange").get("lifecycleStateChange")
    return Written(
        run_id=event.run_id or "",
        rows=int_of(stats.get("rowCount")),
        size=int_of(stats.get("size")),
        files=int_of(stats.get("fileCount")),
        replaced=lifecycle in _REPLACING,
        version=dataset.version,
    )


# Lifecycle states in which the run removed the dataset's data or its name: nothing it wrote is
# there to judge (and whatever is there later is another run's).
_REMOVING = {
    "DROP": "dropped",
    "TRUNCATE": "truncated",
    "RENAME": "renamed",
}


def removed_by_run(event: Event | Mapping[str, Any], ref: DatasetRef) -> str | None:
    """Why output `ref` has nothing of its run to evaluate (the run dropped, truncated or renamed
    it), or None. The listener may list one dataset twice in an event: any of its entries counts."""
    if ref.role != "outputs":
        return None
    for dataset in Event.of(event).outputs:
        if (dataset.ref.namespace, dataset.ref.name) != (ref.namespace, ref.name):
            continue
        facet = dataset.facet("lifecycleStateChange")
        state = facet.get("lifecycleStateChange")
        if isinstance(state, str) and state.upper() in _REMOVING:
            what = f"the run {_REMOVING[state.upper()]} this dataset (lifecycleStateChange {state})"
            previous = facet.get("previousIdentifier")
            if state.upper() == "RENAME" and isinstance(previous, Mapping):
                what += f" from {previous.get('namespace')}:{previous.get('name')}"
            return what + ": it wrote no data to evaluate"
    return None


def evaluation_key(event: Event | Mapping[str, Any], ref: DatasetRef) -> tuple[Any, ...]:
    """One evaluation per (run, dataset, version). The listener reports one `saveAsTable` as two
    runs of the same Spark application (a CTAS and an insert), each with a COMPLETE: for outputs
    the run is the application run (the `parent` facet) and the write is told apart from the
    application's other writes to the same dataset by its version, else its statistics."""
    event = Event.of(event)
    run_id = event.run_id or ""
    if ref.role == "inputs":
        return ("inputs", run_id, ref.namespace, ref.name, event.dataset(ref).version)
    parent_run = event.parent_run_id
    account = written(event, ref)
    assert account is not None
    if account.version is None and account.rows is None and account.size is None:
        return ("outputs", run_id, ref.namespace, ref.name)  # nothing tells writes apart
    # The statistics too: two events naming one version with different statistics (the
    # listener may name the snapshot before the write) are not the same write.
    identity = (account.version, account.rows, account.size, account.files)
    return ("outputs", parent_run or run_id, ref.namespace, ref.name, identity)


@attrs.frozen
class LeftByRun:
    """A plain-file dataset as its run left it: the files modified at or before the run's
    COMPLETE (`kept`), and those modified after it (`later`: another write's, never read)."""

    completed_ms: int
    kept: tuple[StoredFile, ...]
    later: tuple[StoredFile, ...]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.kept)

    def describe(self, account: Written | None) -> str:
        """What a verdict on these files covers, for the facet's `params.scope`."""
        when = _iso(self.completed_ms)
        text = f"the {len(self.kept)} file(s) of the dataset as of the run's completion ({when})"
        if account is not None and account.files is not None and not account.replaced:
            text += f", {account.files} of them written by the run"
        if self.later:
            text += f"; {len(self.later)} file(s) written after it were not read"
        return text


def completed_ms(event: Event | Mapping[str, Any]) -> int | None:
    """The COMPLETE event's time in epoch milliseconds, None when absent or without a zone."""
    return Event.of(event).completed_ms


def left_by_run(listing: Sequence[StoredFile], completed: int) -> LeftByRun:
    kept = tuple(f for f in listing if f.modified_ms <= completed)
    later = tuple(f for f in listing if f.modified_ms > completed)
    return LeftByRun(completed, kept, later)


def _exact(account: Written, left: LeftByRun) -> bool:
    # A replacing write leaves exactly its own files; one into partition folders may replace only
    # the partitions it wrote (dynamic partition overwrite), so the others stay beside it.
    return account.replaced and not any(f.partitioned for f in left.kept)


def files_change(account: Written, left: LeftByRun) -> str | None:
    """Why the files from before the run's completion cannot be the data it left (fewer files or
    bytes than it wrote; for a replacing write, other counts), or None."""
    later = f" ({len(left.later)} written after it)" if left.later else ""
    found = len(left.kept)
    if _exact(account, left):
        if account.files is not None and found != account.files:
            return f"run {account.run_id} wrote {account.files} file(s), found {found}{later}"
        if account.size is not None and left.size != account.size:
            return f"run {account.run_id} wrote {account.size} bytes, found {left.size}{later}"
        return None
    if account.files is not None and found < account.files:
        return (
            f"run {account.run_id} wrote {account.files} file(s), found {found} from before its "
            f"completion{later}"
        )
    if account.size is not None and left.size < account.size:
        return (
            f"run {account.run_id} wrote {account.size} bytes, found {left.size} from before its "
            f"completion{later}"
        )
    return None


def still_there(left: LeftByRun, now: Sequence[StoredFile]) -> str | None:
    """Why the files read are no longer all there as they were (written over during the scan),
    or None."""
    current = {f.path: f for f in now}
    for kept in left.kept:
        found = current.get(kept.path)
        if found is None:
            return f"{kept.path} was removed while it was read"
        if (found.size, found.modified_ms) != (kept.size, kept.modified_ms):
            return f"{kept.path} was rewritten while it was read"
    return None


def rows_change(account: Written, left: LeftByRun | None, found: int | None) -> str | None:
    """Why the rows evaluated cannot hold the rows the run wrote (a replacing write: another
    number; any other write: fewer), or None."""
    if account.rows is None or found is None:
        return None
    exact = account.replaced if left is None else _exact(account, left)
    if found == account.rows or (not exact and found > account.rows):
        return None
    return f"run {account.run_id} wrote {account.rows} rows, found {found}"


def _iso(ms: int) -> str:
    when = datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC)
    return when.isoformat(timespec="milliseconds")


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


def version_read(event: Event | Mapping[str, Any], ref: DatasetRef) -> AsOf:
    """The version of a Delta/Iceberg dataset this run read or wrote: the one its `version` facet
    names, else the table as of the COMPLETE event's time (the run's own commit is the last one
    before it, whatever was written after). Which one it was is checked afterwards against the
    run's `outputStatistics` where the listener sends them: the listener 1.53 sometimes names the
    snapshot before the write, or reports a write before its commit."""
    event = Event.of(event)
    version = event.dataset(ref).version
    if version is not None:
        return AsOf(version=version)
    completed = event.completed_ms
    if completed is None:
        raise DatasetError(
            f"cannot tell which version of the table run {event.run_id} wrote: no version "
            f"facet and no usable eventTime ({event.event_time!r})"
        )
    return AsOf(timestamp_ms=completed)

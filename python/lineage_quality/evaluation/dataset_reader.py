"""Reading a dataset of an event the way it was written, and only what its binding allows: the
catalog table to read it through (only where the evaluator's catalog keeps it at the event's
location), the files a plain-file run left (modified at or before its COMPLETE, checked
against what the run says it wrote), the version a table format's run read or wrote."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from lineage_quality.contracts import BoundRules
from lineage_quality.contracts.binding import table_key
from lineage_quality.errors import DatasetError
from lineage_quality.evaluation.datasets import (
    AsOf,
    catalog_location,
    escaped_binding,
    is_versioned,
    location_of,
    outside_table_location,
    read_dataset,
    same_location,
)
from lineage_quality.evaluation.storage import StoredFile, list_files
from lineage_quality.evaluation.written import (
    LeftByRun,
    Written,
    changed_message,
    completed_ms,
    files_change,
    left_by_run,
)
from lineage_quality.values.event import Event
from lineage_quality.values.refs import DatasetRef, table_names


class DatasetReader:
    """Reads datasets with the session `spark()` gives (the evaluator's, started on first use
    and replaced when its JVM died)."""

    def __init__(self, spark: Callable[[], SparkSession]) -> None:
        self._spark = spark

    @property
    def spark(self) -> SparkSession:
        return self._spark()

    def read(
        self,
        ref: DatasetRef,
        facets: Mapping[str, Any] | None,
        fmt: str | None,
        as_of: AsOf | None = None,
        table: str | None = None,
        left: LeftByRun | None = None,
    ) -> DataFrame:
        """The dataset as a lazy DataFrame (through the catalog as `table`, or the files the run
        left); raises DatasetError when it cannot be opened."""
        files = None
        not_after = None
        if left is not None and left.later:  # only then: a plain read keeps the footer shortcut
            files = [f.path for f in left.kept]
            not_after = left.completed_ms
        return read_dataset(
            self.spark,
            ref.namespace,
            ref.name,
            facets,
            fmt,
            as_of,
            table=table,
            files=files,
            not_after_ms=not_after,
        )

    def listing(
        self, event: Event | Mapping[str, Any], ref: DatasetRef, groups: Sequence[BoundRules]
    ) -> list[StoredFile] | None:
        """A plain-file output's files, listed once per evaluation: they tell writes apart (one
        application may write a path twice with equal statistics; only the COMPLETEs of one
        write, saveAsTable's two, see the same files) and are what the evaluation reads. None
        where there are no files to tell by (inputs, versioned tables) or they cannot be listed
        (the evaluation lists and reports that)."""
        if ref.role != "outputs" or not any(g.matches(ref.namespace, ref.name) for g in groups):
            return None  # listed only where a contract named the path (never a host or bucket
            # an event alone names: a table-bound path is checked first, in the evaluation)
        facets = Event.of(event).dataset(ref).facets
        fmt = next((g.format for g in groups if g.format), None)
        try:
            if completed_ms(event) is None or is_versioned(ref.namespace, ref.name, facets, fmt):
                return None
            return list_files(self.spark, location_of(ref.namespace, ref.name))
        except DatasetError:
            return None

    def table_to_read(
        self,
        ref: DatasetRef,
        location: str,
        facets: Mapping[str, Any] | None,
        groups: Sequence[BoundRules],
    ) -> str | None:
        """The catalog table to read the dataset through, or None to read its location; raises
        DatasetError when the dataset may not be read under its binding.

        A table is read through the evaluator's catalog only where that catalog keeps it at the
        event's location, so the data read is the dataset's whoever named the table. Bound by
        path: the path must stay within the binding (symlinks resolved). Bound by table name
        only: the contract's table, else the event's path if it lies where the table's catalog
        keeps its tables (a warehouse folder or bucket named by the identity)."""
        by_path = [g for g in groups if g.matches(ref.namespace, ref.name)]
        event_tables = table_names(facets)
        if by_path:
            escaped = escaped_binding(
                location, lambda real: any(g.matches(ref.namespace, real) for g in by_path)
            )
            if escaped:
                raise DatasetError(f"refused: {escaped}")
            candidates = event_tables
        else:
            wanted = {table_key(t) for t in event_tables}
            candidates = [t for g in groups for t in g.tables if table_key(t) in wanted]
        for table in candidates:
            kept_at = catalog_location(self.spark, table)
            if kept_at is None:
                continue
            if same_location(kept_at, location):
                return table
            if not by_path:
                raise DatasetError(
                    f"refused: the event places table {table} at {location}, but the "
                    f"evaluator's catalog keeps it at {kept_at}"
                )
        if not by_path:
            outside = outside_table_location(ref.namespace, location, facets)
            if outside:
                raise DatasetError(f"refused: {outside}")
        return None

    def left_by_run(
        self,
        event: Event | Mapping[str, Any],
        location: str,
        account: Written | None,
        listing: list[StoredFile] | None = None,
    ) -> LeftByRun | None:
        """The files of a plain-file dataset as its run left them (modified at or before its
        COMPLETE), checked against what the run says it wrote; raises DatasetError when they
        cannot be its data. None when the event has no usable time (inputs only)."""
        completed = completed_ms(event)
        if completed is None:
            if account is None:
                return None
            raise DatasetError(
                f"cannot tell which files of {location} run {account.run_id} left: its event "
                f"has no usable eventTime ({Event.of(event).event_time!r})"
            )
        if listing is None:
            listing = list_files(self.spark, location)
        left = left_by_run(listing, completed)
        if account is not None:
            why = files_change(account, left)
            if why:
                raise DatasetError(changed_message(location, why))
        if left.later and not left.kept:
            raise DatasetError(
                f"every file of {location} was written after the run's completion "
                f"({len(left.later)} file(s)): the data the run read or wrote is gone"
            )
        return left



def fingerprint(
    listing: list[StoredFile], completed: int | None
) -> tuple[tuple[str, int, int], ...] | None:
    """The files a run left (path, size, time): what tells two writes of one path apart."""
    if completed is None:
        return None
    return tuple((f.path, f.size, f.modified_ms) for f in left_by_run(listing, completed).kept)

"""Evaluate the rules bound to an event's datasets, with a SparkSession of our own.

Our session runs without the OpenLineage listener, so the producer's own evaluation queries never
appear as lineage jobs downstream.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs
from pyspark.sql import DataFrame, SparkSession

from lineage_quality.contracts import BoundRules, rules_for
from lineage_quality.contracts.binding import table_key
from lineage_quality.contracts.near_miss_log import NearMissLog
from lineage_quality.engine.quarantine import QuarantineConfig, quarantine_failures
from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.errors import DatasetError, SparkStartError
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
from lineage_quality.evaluation.jvm import (
    context_running,
    forget_dead_jvm,
    jvm_alive,
    jvm_exited,
    kill_jvm,
    stop_jvm,
)
from lineage_quality.evaluation.refs import DatasetRef, datasets_of, table_names
from lineage_quality.evaluation.session import evaluator_session
from lineage_quality.evaluation.storage import StoredFile, list_files
from lineage_quality.evaluation.written import (
    LeftByRun,
    Written,
    changed_message,
    completed_ms,
    evaluation_key,
    files_change,
    left_by_run,
    removed_by_run,
    rows_change,
    still_there,
    version_read,
    written,
)
from lineage_quality.history.judge import NO_HISTORY_STORE, judge_and_record, without_history
from lineage_quality.history.store import HistoryStore
from lineage_quality.results import (
    DATASET_REMOVED,
    Cause,
    RuleResult,
    Status,
    error_result,
    skipped_result,
)

log = logging.getLogger(__name__)

MEMO_SIZE = 4096  # writes whose results are kept for a repeated COMPLETE
_JOB_GROUP_PROPERTIES = (
    "spark.jobGroup.id",
    "spark.job.description",
    "spark.job.interruptOnCancel",
)


class Evaluator:
    def __init__(
        self,
        bindings: Sequence[BoundRules],
        spark: SparkSession | None = None,
        master: str | None = None,
        conf: Mapping[str, str] | None = None,
        quarantine: QuarantineConfig | None = None,
        history: HistoryStore | None = None,
        profile: bool = False,
    ) -> None:
        self.bindings = list(bindings)
        self.history = history  # every evaluation's values; history rules read it
        self.profile = profile  # every column's cheap metrics, in the same scan
        self._conf = dict(conf or {})
        self.quarantine = quarantine
        self._spark = spark
        self._owned = spark is None  # only a JVM we started is ever killed or replaced
        self._master = master
        self._lock = threading.Lock()
        self.restarts = 0
        # One evaluation per (run, dataset, version): results by evaluation_key, and the
        # evaluations under way (a second COMPLETE for the same write waits for the first).
        self._memo: OrderedDict[tuple[Any, ...], list[RuleResult]] = OrderedDict()
        self._pending: dict[tuple[Any, ...], threading.Event] = {}
        self._memo_lock = threading.Lock()
        self.evaluations = 0  # datasets actually evaluated (not reused)
        self._near_misses = NearMissLog(self.bindings)
        self.stopping = False  # the producer is stopping: no new JVM from then on (`close`)

    @property
    def spark(self) -> SparkSession:
        with self._lock:
            if self._spark is not None and self._owned and not jvm_alive(self._spark):
                if self.stopping:  # the JVM died with the stop (its process group signalled)
                    raise SparkStartError("the evaluator is stopping", "its JVM is gone")
                forget_dead_jvm()
                self._spark = None
                self.restarts += 1
            if self._spark is None:
                if self.stopping:
                    raise SparkStartError("the evaluator is stopping", "no JVM is started now")
                self._spark = evaluator_session(self._master, self._conf)
            return self._spark

    def usable(self, timeout: float) -> bool:
        """Whether our own session can still evaluate: its JVM's process alive and its
        SparkContext not stopped (a JVM given SIGTERM stops it first), asked for at most
        `timeout` seconds (a JVM that does not answer is not usable). Not started: usable unless
        stopping with rules to evaluate (none is started then). A session given to us: usable."""
        spark = self._spark
        if not self._owned:
            return True
        if spark is None:
            return not (self.stopping and self.bindings)
        return not jvm_exited() and context_running(spark, timeout)

    def close(self, timeout: float) -> None:
        """Stop our own session and end its JVM, within `timeout` seconds (jvm.stop_jvm); no
        new one is started afterwards. A session given to us is left as it is."""
        self.stopping = True
        if self._owned and self._spark is not None:
            stop_jvm(self._spark, timeout)

    @property
    def started(self) -> bool:
        """Whether a Spark session is up (ours started, or one given to us)."""
        return self._spark is not None

    def jvm_died(self) -> bool:
        """Whether the JVM of our own session has died (then `spark` starts a new one)."""
        spark = self._spark
        return spark is not None and self._owned and not jvm_alive(spark)

    def tasks_running(self, job_group: str) -> bool:
        """Whether tasks of `job_group` still run (also after their job was cancelled)."""
        if self._spark is None:
            return False
        tracker = self._spark.sparkContext.statusTracker()
        for job_id in tracker.getJobIdsForGroup(job_group):
            job = tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job is not None else ():
                stage = tracker.getStageInfo(stage_id)
                if stage is not None and stage.numActiveTasks > 0:
                    return True
        return False

    def kill(self) -> bool:
        """Kill our own JVM (work ignoring cancellation); False for a session we do not own."""
        if not self._owned or self._spark is None:
            return False
        kill_jvm()
        return True

    def bound(self, event: Mapping[str, Any]) -> dict[DatasetRef, list[BoundRules]]:
        """The event's datasets that have rules, with those rules (a dataset listed twice in one
        role: its first listing). Pure but for the log line of a dataset that a contract nearly
        binds (once per dataset)."""
        out: dict[DatasetRef, list[BoundRules]] = {}
        seen: set[tuple[str, str, str]] = set()
        for ref in datasets_of(event):
            # a dataset listed twice as input (or as output) is the same data of the same run:
            # evaluated and enriched once, at its first listing (an event must not multiply work)
            listed = (ref.role, ref.namespace, ref.name)
            if listed in seen:
                continue
            dataset = event[ref.role][ref.index]
            facets = dataset.get("facets") if isinstance(dataset, Mapping) else None
            tables = table_names(facets)
            found = rules_for(self.bindings, ref.namespace, ref.name, tables)
            if found:  # seen once bound: a later listing may name the catalog table
                seen.add(listed)
                out[ref] = found
            elif self.bindings and event.get("eventType") == "COMPLETE":
                self._near_misses.check(ref.namespace, ref.name, tables)
        return out

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

    def evaluate(self, event: Mapping[str, Any]) -> dict[DatasetRef, list[RuleResult]]:
        return dict(self.evaluate_each(event))

    def evaluate_each(
        self,
        event: Mapping[str, Any],
        job_group: str | None = None,
        bound: Mapping[DatasetRef, Sequence[BoundRules]] | None = None,
    ) -> Iterator[tuple[DatasetRef, list[RuleResult]]]:
        """Each bound dataset's results as soon as they are known (`bound`: what `bound(event)`
        gave, if the caller has it). With `job_group`, the Spark jobs run in that group, so
        `cancel(job_group)` stops them."""
        if bound is None:
            bound = self.bound(event)
        if not bound:
            return
        spark = self.spark
        context = spark.sparkContext
        # Each evaluation runs on a thread of its own: make the session the JVM thread's active
        # one, or SQL settings (table-format catalogs) read from that thread are the defaults.
        spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(  # type: ignore[union-attr]
            spark._jsparkSession
        )
        if job_group:
            context.setJobGroup(job_group, f"lineage-quality {job_group}", interruptOnCancel=True)
        try:
            for ref, groups in bound.items():
                yield ref, self._evaluate_once(event, ref, groups)
        finally:
            if job_group and not self.jvm_died():
                for key in _JOB_GROUP_PROPERTIES:
                    context.setLocalProperty(key, None)  # type: ignore[arg-type]  # None removes

    def cancel(self, job_group: str) -> None:
        """Cancel the running Spark jobs of `job_group` (interrupting their tasks)."""
        if self._spark is not None:
            self._spark.sparkContext.cancelJobGroup(job_group)

    def _evaluate_once(
        self, event: Mapping[str, Any], ref: DatasetRef, groups: Sequence[BoundRules]
    ) -> list[RuleResult]:
        """The dataset's results, evaluated once per write: a second COMPLETE for the same
        write (saveAsTable sends two) reuses the first one's results."""
        listing = self._listing(event, ref, groups)
        files = None if listing is None else _fingerprint(listing, completed_ms(event))
        key = (evaluation_key(event, ref), files, tuple(id(g) for g in groups))
        while True:
            with self._memo_lock:
                if key in self._memo:
                    self._memo.move_to_end(key)
                    log.info("%s: same write as an evaluated event; results reused", ref.key)
                    return self._memo[key]
                waiting = self._pending.get(key)
                if waiting is None:
                    done = self._pending[key] = threading.Event()
                    break
            waiting.wait()
        try:
            results = self._evaluate_dataset(event, ref, groups, listing)
            if self.history is not None:
                results = self._against_history(event, ref, results)
            else:
                results = without_history(results, Status.ERROR, NO_HISTORY_STORE)
            if not any(r.status is Status.ERROR for r in results):  # errors are tried again
                with self._memo_lock:
                    self._memo[key] = results
                    while len(self._memo) > MEMO_SIZE:
                        self._memo.popitem(last=False)
            return results
        finally:
            with self._memo_lock:
                self._pending.pop(key, None)
            done.set()

    def _evaluate_dataset(
        self,
        event: Mapping[str, Any],
        ref: DatasetRef,
        groups: Sequence[BoundRules],
        listing: list[StoredFile] | None = None,
    ) -> list[RuleResult]:
        """`listing`: the dataset's files as `_listing` found them just before (not listed
        again)."""
        dataset = event[ref.role][ref.index]
        facets = dataset.get("facets") if isinstance(dataset, Mapping) else None
        rules = [r for g in groups for r in g.rules]
        removed = removed_by_run(event, ref)
        if removed is not None:
            return [skipped_result(r, DATASET_REMOVED, removed) for r in rules]
        fmt = next((g.format for g in groups if g.format), None)
        account = written(event, ref)
        try:
            location = location_of(ref.namespace, ref.name)
            table = self._table_to_read(ref, location, facets, groups)
            as_of = None
            left = None
            if is_versioned(ref.namespace, ref.name, facets, fmt):
                # A table format keeps every version: read the one this run read or wrote,
                # whenever the evaluation happens.
                as_of = version_read(event, ref)
            else:
                left = self._left_by_run(event, location, account, listing)
            self.evaluations += 1
            try:
                df = self.read(ref, facets, fmt, as_of, table, left)
                profile = self.profile or any(g.profile for g in groups)
                results = evaluate_dataframe(df, rules, profile=profile)
            finally:
                # Written over while being read (files gone mid-scan, or a mix of two writes):
                # the listing after the scan says so, whatever the scan returned.
                if left is not None:
                    now = list_files(self.spark, location)
                    why = None
                    if account is not None:  # say it in the run's own terms where it can
                        why = files_change(account, left_by_run(now, left.completed_ms))
                    why = why or still_there(left, now)
                    if why:
                        raise DatasetError(changed_message(location, why))
            if account is not None:
                found = next(  # the dataset's rows: not those a filter condition selected
                    (
                        r.row_count
                        for r in results
                        if r.row_count is not None and not r.rule.filter_condition
                    ),
                    None,
                )
                why = rows_change(account, left, found)
                if why:
                    raise DatasetError(changed_message(location, why, as_of))
            if left is not None and (left.later or (account is not None and not account.replaced)):
                scope = left.describe(account)
                results = [
                    attrs.evolve(r, scope=f"{scope}; {r.scope}" if r.scope else scope)
                    for r in results
                ]
            if self.quarantine is not None:
                run_id = (event.get("run") or {}).get("runId")
                results = quarantine_failures(
                    df,
                    results,
                    self.quarantine,
                    run_id if isinstance(run_id, str) else None,
                    ref.key,
                )
            return results
        except DatasetError as exc:
            log.warning("%s: %s", ref.key, exc)
            return [error_result(r, str(exc), Cause.UNREADABLE) for r in rules]
        except Exception as exc:
            if self.jvm_died():
                message = (
                    "the evaluator's JVM died during this evaluation (out of memory, killed or "
                    "crashed); a new one evaluates the next events"
                )
                log.error("%s: %s", ref.key, message)
                return [error_result(r, message) for r in rules]
            log.exception("evaluation of %s failed", ref.key)
            return [error_result(r, f"evaluation failed: {exc}", Cause.QUERY_FAILED) for r in rules]

    def _listing(
        self, event: Mapping[str, Any], ref: DatasetRef, groups: Sequence[BoundRules]
    ) -> list[StoredFile] | None:
        """A plain-file output's files, listed once per evaluation: they tell writes apart (one
        application may write a path twice with equal statistics; only the COMPLETEs of one
        write, saveAsTable's two, see the same files) and are what the evaluation reads. None
        where there are no files to tell by (inputs, versioned tables) or they cannot be listed
        (the evaluation lists and reports that)."""
        if ref.role != "outputs" or not any(g.matches(ref.namespace, ref.name) for g in groups):
            return None  # listed only where a contract named the path (never a host or bucket
            # an event alone names: a table-bound path is checked first, in the evaluation)
        dataset = event[ref.role][ref.index]
        facets = dataset.get("facets") if isinstance(dataset, Mapping) else None
        fmt = next((g.format for g in groups if g.format), None)
        try:
            if completed_ms(event) is None or is_versioned(ref.namespace, ref.name, facets, fmt):
                return None
            return list_files(self.spark, location_of(ref.namespace, ref.name))
        except DatasetError:
            return None

    def _against_history(
        self, event: Mapping[str, Any], ref: DatasetRef, results: list[RuleResult]
    ) -> list[RuleResult]:
        """History rules judged on their earlier values; every measured value kept."""
        assert self.history is not None
        run_id = str((event.get("run") or {}).get("runId", ""))
        event_ms = completed_ms(event) or int(time.time() * 1000)
        dataset = event[ref.role][ref.index]
        facets = dataset.get("facets") if isinstance(dataset, Mapping) else None
        version = (facets or {}).get("version") if isinstance(facets, Mapping) else None
        number = version.get("datasetVersion") if isinstance(version, Mapping) else None
        return judge_and_record(
            self.history,
            ref.key,
            run_id,
            event_ms,
            results,
            None if number is None else str(number),
        )

    def _table_to_read(
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

    def _left_by_run(
        self,
        event: Mapping[str, Any],
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
                f"has no usable eventTime ({event.get('eventTime')!r})"
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


def _fingerprint(
    listing: list[StoredFile], completed: int | None
) -> tuple[tuple[str, int, int], ...] | None:
    """The files a run left (path, size, time): what tells two writes of one path apart."""
    if completed is None:
        return None
    return tuple((f.path, f.size, f.modified_ms) for f in left_by_run(listing, completed).kept)

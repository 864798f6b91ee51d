"""Evaluate the rules bound to an event's datasets, with a SparkSession of our own (session.py:
without the OpenLineage listener). The parts: which datasets have rules (`bound`), reading a
dataset as its run left it (dataset_reader.py), one evaluation per write (once.py), the engine's
scan, the history rules, the quarantine; a dataset that cannot be read is an ERROR per rule.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs
from pyspark.sql import DataFrame, SparkSession

from lineage_quality.contracts import BoundRules, rules_for
from lineage_quality.contracts.near_miss_log import NearMissLog
from lineage_quality.engine.quarantine import QuarantineConfig, quarantine_failures
from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.engine.samples import take_samples
from lineage_quality.errors import DatasetError, SparkStartError
from lineage_quality.evaluation.batches import batch_files
from lineage_quality.evaluation.dataset_reader import DatasetReader, fingerprint
from lineage_quality.evaluation.datasets import (
    AsOf,
    delta_version_at,
    is_versioned,
    location_of,
    table_format,
)
from lineage_quality.evaluation.increments import Increments, Judged, Output, scope_of
from lineage_quality.evaluation.jvm import (
    context_running,
    forget_dead_jvm,
    jvm_alive,
    jvm_exited,
    kill_jvm,
    stop_jvm,
)
from lineage_quality.evaluation.once import OncePerWrite
from lineage_quality.evaluation.reconcile import HIDDEN, Reconciler, visible
from lineage_quality.evaluation.reuse import Reuse, files_key, rules_key, stat_file, table_key
from lineage_quality.evaluation.session import evaluator_session
from lineage_quality.evaluation.storage import StoredFile, list_files
from lineage_quality.evaluation.table_appends import (
    TableAppend,
    delta_append,
    iceberg_append,
    iceberg_snapshot_at,
    iceberg_written_snapshot,
)
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
from lineage_quality.history.states import StateStore
from lineage_quality.history.store import HistoryStore
from lineage_quality.masked_values import masked_results
from lineage_quality.results import (
    DATASET_REMOVED,
    Cause,
    RuleResult,
    Status,
    error_result,
    skipped_result,
)
from lineage_quality.rules.history import DEFAULT_MINIMUMS, HistoryMinimums
from lineage_quality.samples import SamplePolicy, Sampling
from lineage_quality.values.event import Event
from lineage_quality.values.refs import DatasetRef

log = logging.getLogger(__name__)

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
        history_minimums: HistoryMinimums = DEFAULT_MINIMUMS,
        reuse: Reuse | None = None,
        sampling: Sampling | None = None,
    ) -> None:
        self.bindings = list(bindings)
        self.reuse = reuse  # one evaluation per dataset version, across runs (reuse.py)
        # failing-row samples: the settings' rows, key and facets; each dataset's contracts
        # add their policy (`_sampling`). None: no samples.
        self.sampling = sampling
        # how a masked column's values are shown, samples or not (`_masking`): the settings'
        # key, else one of this process
        self._masks = sampling if sampling is not None else Sampling(rows=0)
        self.history = history  # every evaluation's values; history rules read it
        self.history_minimums = history_minimums  # of bands declaring none (settings)
        self.profile = profile  # every column's cheap metrics, in the same scan
        self._conf = dict(conf or {})
        self.quarantine = quarantine
        self._spark = spark
        self._owned = spark is None  # only a JVM we started is ever killed or replaced
        self._master = master
        self._lock = threading.Lock()
        self.restarts = 0
        self.once = OncePerWrite()  # one evaluation per (run, dataset, version)
        # appends judged on their own rows, from states kept in the history store
        self.increments = Increments(
            None if history is None or history.read_only else StateStore(history)
        )
        self.reconciler = Reconciler()  # outputs against the inputs their run read
        self.reader = DatasetReader(lambda: self.spark)
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

    def bound(self, event: Event | Mapping[str, Any]) -> dict[DatasetRef, list[BoundRules]]:
        """The event's datasets that have rules, with those rules (a dataset listed twice in one
        role: its first listing). Pure but for the log line of a dataset that a contract nearly
        binds (once per dataset)."""
        event = Event.of(event)
        out: dict[DatasetRef, list[BoundRules]] = {}
        seen: set[tuple[str, str, str]] = set()
        for dataset in event.datasets:
            ref = dataset.ref
            # a dataset listed twice as input (or as output) is the same data of the same run:
            # evaluated and enriched once, at its first listing (an event must not multiply work)
            listed = (ref.role, ref.namespace, ref.name)
            if listed in seen:
                continue
            tables = list(dataset.tables)
            found = rules_for(self.bindings, ref.namespace, ref.name, tables)
            if found:  # seen once bound: a later listing may name the catalog table
                seen.add(listed)
                out[ref] = found
            elif self.bindings and event.complete:
                self._near_misses.check(ref.namespace, ref.name, tables)
        return self.reconciler.extend(event, out)

    def read(
        self,
        ref: DatasetRef,
        facets: Mapping[str, Any] | None,
        fmt: str | None,
        as_of: AsOf | None = None,
        table: str | None = None,
        left: LeftByRun | None = None,
    ) -> DataFrame:
        """The dataset as a lazy DataFrame (dataset_reader.py); the one place an evaluation
        reads data (a subclass may read otherwise, as the deadline tests do)."""
        return self.reader.read(ref, facets, fmt, as_of, table, left)

    def evaluate(self, event: Event | Mapping[str, Any]) -> dict[DatasetRef, list[RuleResult]]:
        return dict(self.evaluate_each(event))

    def evaluate_each(
        self,
        given: Event | Mapping[str, Any],
        job_group: str | None = None,
        bound: Mapping[DatasetRef, Sequence[BoundRules]] | None = None,
    ) -> Iterator[tuple[DatasetRef, list[RuleResult]]]:
        """Each bound dataset's results as soon as they are known (`bound`: what `bound(event)`
        gave, if the caller has it). With `job_group`, the Spark jobs run in that group, so
        `cancel(job_group)` stops them."""
        event = Event.of(given)
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
        measured: dict[DatasetRef, list[RuleResult]] = {}  # hidden rules too: reconciliations

        def frame(ref: DatasetRef) -> DataFrame:
            return self.frame(event, ref, bound.get(ref, ()))

        try:
            for ref, groups in bound.items():
                measured[ref] = results = self._evaluate_once(event, ref, groups)
                judged = self.reconciler.judge(event, ref, results, measured, frame)
                yield ref, visible(judged)
        finally:
            if job_group and not self.jvm_died():
                for key in _JOB_GROUP_PROPERTIES:
                    context.setLocalProperty(key, None)  # type: ignore[arg-type]  # None removes

    def cancel(self, job_group: str) -> None:
        """Cancel the running Spark jobs of `job_group` (interrupting their tasks)."""
        if self._spark is not None:
            self._spark.sparkContext.cancelJobGroup(job_group)

    def _evaluate_once(
        self, event: Event, ref: DatasetRef, groups: Sequence[BoundRules]
    ) -> list[RuleResult]:
        """The dataset's results, evaluated once per write: a second COMPLETE for the same
        write (saveAsTable sends two) reuses the first one's results."""
        listing = self.reader.listing(event, ref, groups)
        files = None if listing is None else fingerprint(listing, completed_ms(event))
        key = (evaluation_key(event, ref), files, tuple(id(g) for g in groups))
        where: list[tuple[str | None, AsOf | None, LeftByRun | None]] = []

        masking = self._masking(groups)

        def judged() -> list[RuleResult]:
            found = where[0] if where else None
            results = self._evaluate_dataset(event, ref, groups, listing, found)
            shown, hidden = visible(results), [r for r in results if r.rule.origin == HIDDEN]
            if self.history is not None:  # the hidden rules of reconciliations are not kept
                shown = self._against_history(event, ref, shown, masking)
            else:
                shown = without_history(shown, Status.ERROR, NO_HISTORY_STORE)
            # judged (and kept in the history) raw; masked before they are kept for reuse
            return masked_results([*shown, *hidden], masking)

        def once_per_version() -> list[RuleResult]:
            version = self._version_key(event, ref, groups, listing, where)
            settings = (self.profile, self.quarantine, self.history_minimums, self.history is None)
            rules = rules_key(groups, settings)
            if self.reuse is None or version is None or rules is None:
                return judged()
            declared = [r for g in groups for r in g.rules]
            account = written(event, ref)
            left = where[0][2] if where else None

            def fits(results: list[RuleResult]) -> bool:  # this run's own account of the write
                found = next((r.row_count for r in results if r.row_count is not None), None)
                return account is None or rows_change(account, left, found) is None

            return self.reuse.results(
                ref.key, version, rules, event.run_id or "", declared, judged, fits
            )

        # and as they leave: verdicts reused from before a column was masked (masked_values.py)
        return masked_results(self.once.results(key, once_per_version, ref.key), masking)

    def _version_key(
        self,
        event: Event,
        ref: DatasetRef,
        groups: Sequence[BoundRules],
        listing: list[StoredFile] | None,
        where: list[tuple[str | None, AsOf | None, LeftByRun | None]],
    ) -> str | None:
        """The version of dataset `ref` this run read or wrote (reuse.py), None in any doubt;
        what to read of it is put in `where` (the evaluation reads that, not listed twice)."""
        if self.reuse is None or removed_by_run(event, ref) is not None:
            return None
        try:
            if batch_files(event, ref) is not None:
                return None  # a streaming query's new batches: judged as such (batches.py)
            location = location_of(ref.namespace, ref.name)
            where.append(self._where(event, ref, groups, location, listing))
        except DatasetError:
            return None  # the evaluation says why
        table, as_of, left = where[0]
        if as_of is not None:
            facets = event.dataset(ref).facets
            fmt = next((g.format for g in groups if g.format), None)
            found = table_format(ref.namespace, ref.name, facets, fmt)
            if as_of.version is None and as_of.timestamp_ms is not None and found == "delta":
                # the listener 1.53 names no Delta version: the last commit before the event's
                # time (what the evaluation would read), found in the log, not by a scan
                try:
                    as_of = AsOf(version=delta_version_at(self.spark, location, as_of.timestamp_ms))
                except Exception:  # no such commit, a log that cannot be read: the evaluation says
                    return None
                where[0] = (table, as_of, left)
            return table_key(location, as_of, found, lambda path: stat_file(self.spark, path))
        return None if left is None else files_key(location, left)

    def _evaluate_dataset(
        self,
        event: Event,
        ref: DatasetRef,
        groups: Sequence[BoundRules],
        listing: list[StoredFile] | None = None,
        where: tuple[str | None, AsOf | None, LeftByRun | None] | None = None,
    ) -> list[RuleResult]:
        """`listing`: the dataset's files as `DatasetReader.listing` found them just before
        (not listed again); `where`: what `_where` said to read, when asked already."""
        facets = event.dataset(ref).facets
        rules = [r for g in groups for r in g.rules]
        removed = removed_by_run(event, ref)
        if removed is not None:
            return [skipped_result(r, DATASET_REMOVED, removed) for r in rules]
        fmt = next((g.format for g in groups if g.format), None)
        account = written(event, ref)
        try:
            batch = batch_files(event, ref)  # a streaming query's micro-batches (batches.py)
            if batch is not None and table_format(ref.namespace, ref.name, facets, fmt) == "delta":
                fmt = "parquet"  # the files a Delta sink's batches added, read as they are
            location = location_of(ref.namespace, ref.name)
            table, as_of, left = where or self._where(event, ref, groups, location, listing)
            self.evaluations += 1
            try:
                profile = self.profile or any(g.profile for g in groups)
                if as_of is not None and account is not None:
                    judged = self._judge_version(
                        event, ref, groups, location, as_of, table, account, profile
                    )
                else:
                    output = Output(
                        ref.key, event.run_id or "", rules, profile, scope_of(groups), account
                    )
                    judged = self.increments.judge(
                        output,
                        lambda files: self.read(ref, facets, fmt, as_of, table, _only(left, files)),
                        # a catalog table: read whole; micro-batches: their files alone
                        left if table is None and batch is None else None,
                    )
                df, results = judged.frame, judged.results
                sampling = self._sampling(groups)
                if sampling is not None:  # from the rows judged (engine/samples.py)
                    results = take_samples(df, results, sampling)
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
            if account is not None and not judged.checked:
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
            if batch is not None:
                scope = batch.describe()
                results = [attrs.evolve(r, scope=scope, batches=batch.batches) for r in results]
            elif judged.scope is not None:
                results = [attrs.evolve(r, scope=_joined(judged.scope, r.scope)) for r in results]
            elif left is not None and (
                left.later or (account is not None and not account.replaced)
            ):
                scope = left.describe(account)
                results = [
                    attrs.evolve(r, scope=f"{scope}; {r.scope}" if r.scope else scope)
                    for r in results
                ]
            if self.quarantine is not None:
                results = quarantine_failures(df, results, self.quarantine, event.run_id, ref.key)
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

    def _judge_version(
        self,
        event: Event,
        ref: DatasetRef,
        groups: Sequence[BoundRules],
        location: str,
        as_of: AsOf,
        table: str | None,
        account: Written,
        profile: bool,
    ) -> Judged:
        """A table format's output, judged on the rows its commit appended where it can (a
        Delta or Iceberg append: evaluation/table_appends.py), else read whole at its version."""
        facets = event.dataset(ref).facets
        fmt = next((g.format for g in groups if g.format), None)

        def at(version: str | None) -> DataFrame:
            return self.read(ref, facets, fmt, AsOf(version=version) if version else as_of, table)

        version = as_of.version
        kind = table_format(ref.namespace, ref.name, facets, fmt)
        if kind and version is None and as_of.timestamp_ms is not None:
            when = as_of.timestamp_ms
            try:
                if kind == "delta":
                    version = delta_version_at(self.spark, location, when)
                else:
                    version = iceberg_snapshot_at(self.spark, location, when)
            except Exception:  # not told here: read as of the time, whole
                version = None
        if kind == "iceberg" and as_of.version is not None and account.rows is not None:
            try:
                version = iceberg_written_snapshot(
                    self.spark, location, as_of.version, account.rows, event.completed_ms
                )
                as_of = AsOf(version=version)
            except Exception:  # the snapshots unreadable here: as the event names it
                pass
        rules = [r for g in groups for r in g.rules]
        if kind is None or version is None or not version.lstrip("-").isdigit():
            whole = at(None)
            return Judged(evaluate_dataframe(whole, rules, profile), whole)
        found = version

        def appended() -> TableAppend | None:
            if kind == "delta":
                return delta_append(self.spark, location, int(found), at)
            return iceberg_append(self.spark, location, found, at)

        output = Output(ref.key, event.run_id or "", rules, profile, scope_of(groups), account)
        return self.increments.judge_table(output, version, at, appended)

    def _sampling(self, groups: Sequence[BoundRules]) -> Sampling | None:
        return None if self.sampling is None else self._masking(groups)

    def _masking(self, groups: Sequence[BoundRules]) -> Sampling:
        policy = SamplePolicy.merged(g.samples for g in groups)
        return attrs.evolve(self._masks, policy=policy)

    def _where(
        self,
        event: Event,
        ref: DatasetRef,
        groups: Sequence[BoundRules],
        location: str,
        listing: list[StoredFile] | None = None,
    ) -> tuple[str | None, AsOf | None, LeftByRun | None]:
        """What to read of dataset `ref`: the catalog table (None: its location), the version
        of a table format the run read or wrote, or the files a plain-file run left. Raises
        DatasetError when that cannot be told, or may not be read under its binding."""
        facets = event.dataset(ref).facets
        fmt = next((g.format for g in groups if g.format), None)
        table = self.reader.table_to_read(ref, location, facets, groups)
        batch = batch_files(event, ref)
        if batch is not None:  # the files a streaming query's micro-batches added, only those
            completed = Event.of(event).completed_ms or 0
            found = listing if listing is not None else list_files(self.spark, location)
            return None, None, batch.left(completed, found)
        if is_versioned(ref.namespace, ref.name, facets, fmt):
            # A table format keeps every version: read the one this run read or wrote,
            # whenever the evaluation happens.
            return table, version_read(event, ref), None
        left = self.reader.left_by_run(event, location, written(event, ref), listing)
        return table, None, left

    def frame(self, event: Event, ref: DatasetRef, groups: Sequence[BoundRules]) -> DataFrame:
        """Dataset `ref` as its run read or wrote it, lazily (a reconciliation's join); raises
        DatasetError as an evaluation would."""
        location = location_of(ref.namespace, ref.name)
        table, as_of, left = self._where(event, ref, groups, location)
        fmt = next((g.format for g in groups if g.format), None)
        return self.read(ref, event.dataset(ref).facets, fmt, as_of, table, left)

    def _against_history(
        self,
        given: Event | Mapping[str, Any],
        ref: DatasetRef,
        results: list[RuleResult],
        masking: Sampling | None = None,
    ) -> list[RuleResult]:
        """History rules judged on their earlier values; every measured value kept (a masked
        column's with the text its readers show: `masking`)."""
        assert self.history is not None
        event = Event.of(given)
        return judge_and_record(
            self.history,
            ref.key,
            event.run_id or "",
            event.time_ms,
            results,
            event.dataset(ref).version,
            self.history_minimums,
            masking,
        )


def _only(left: LeftByRun | None, files: Sequence[StoredFile] | None) -> LeftByRun | None:
    """`left` narrowed to `files` (read by path), or as it is for None."""
    if files is None or left is None:
        return left
    chosen = {f.path for f in files}
    others = tuple(f for f in (*left.kept, *left.later) if f.path not in chosen)
    return LeftByRun(left.completed_ms, tuple(files), others or left.later)


def _joined(first: str, second: str | None) -> str:
    return f"{first}; {second}" if second else first

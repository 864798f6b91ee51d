"""Evaluate the rules bound to an event's datasets, with a SparkSession of our own.

Our session runs without the OpenLineage listener, so the producer's own evaluation queries never
appear as lineage jobs downstream.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pyspark import SparkContext
from pyspark.sql import DataFrame, SparkSession

from lineage_quality.contracts import BoundRules, rules_for
from lineage_quality.datasets import read_dataset
from lineage_quality.engine.quarantine import QuarantineConfig, quarantine_failures
from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.errors import DatasetError
from lineage_quality.producer.enrich import DatasetRef, datasets_of
from lineage_quality.results import RuleResult, error_result

log = logging.getLogger(__name__)

APP_NAME = "lineage-quality-evaluator"
_JOB_GROUP_PROPERTIES = (
    "spark.jobGroup.id",
    "spark.job.description",
    "spark.job.interruptOnCancel",
)

# Session settings the rules' semantics depend on (also set on the in-driver evaluation session).
EVALUATION_SQL_CONF = {
    # dateFormat rules: an unparseable value is null (a failure to count), never an exception.
    "spark.sql.legacy.timeParserPolicy": "CORRECTED",
    # Counting rules compare values of any type; under ANSI a mismatch would be an exception.
    "spark.sql.ansi.enabled": "false",
    # type: sql checks read the dataset's view and catalog tables, not arbitrary files.
    "spark.sql.runSQLOnFiles": "false",
}


def evaluator_session(master: str | None = None) -> SparkSession:
    builder = (
        SparkSession.builder.appName(APP_NAME)
        .config("spark.extraListeners", "")  # never our own lineage: no listener here
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "16")
        # concurrent evaluations (one per producer worker) share the executors
        .config("spark.scheduler.mode", "FAIR")
    )
    for key, value in EVALUATION_SQL_CONF.items():
        builder = builder.config(key, value)
    if master:
        builder = builder.master(master)
    elif not SparkSession.getActiveSession():
        builder = builder.master("local[*]")
    if (
        SparkContext._active_spark_context is None
        and "LINEAGE_QUALITY_SPARK_LOG4J" not in os.environ
    ):
        # A JVM of our own: keep Spark's startup chatter off the user's terminal.
        log4j = Path(__file__).resolve().parent.parent / "log4j2.properties"
        builder = builder.config(
            "spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log4j.as_uri()}"
        )
    return builder.getOrCreate()


class Evaluator:
    def __init__(
        self,
        bindings: Sequence[BoundRules],
        spark: SparkSession | None = None,
        master: str | None = None,
        quarantine: QuarantineConfig | None = None,
    ) -> None:
        self.bindings = list(bindings)
        self.quarantine = quarantine
        self._spark = spark
        self._master = master
        self._lock = threading.Lock()

    @property
    def spark(self) -> SparkSession:
        with self._lock:
            if self._spark is None:
                self._spark = evaluator_session(self._master)
            return self._spark

    def bound(self, event: Mapping[str, Any]) -> dict[DatasetRef, list[BoundRules]]:
        """The event's datasets that have rules, with those rules. Pure."""
        out: dict[DatasetRef, list[BoundRules]] = {}
        for ref in datasets_of(event):
            found = rules_for(self.bindings, ref.namespace, ref.name)
            if found:
                out[ref] = found
        return out

    def read(self, ref: DatasetRef, facets: Mapping[str, Any] | None, fmt: str | None) -> DataFrame:
        """The dataset as a lazy DataFrame; raises DatasetError when it cannot be opened."""
        return read_dataset(self.spark, ref.namespace, ref.name, facets, fmt)

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
        context = self.spark.sparkContext
        if job_group:
            context.setJobGroup(job_group, f"lineage-quality {job_group}", interruptOnCancel=True)
        try:
            for ref, groups in bound.items():
                yield ref, self._evaluate_dataset(event, ref, groups)
        finally:
            if job_group:
                for key in _JOB_GROUP_PROPERTIES:
                    context.setLocalProperty(key, None)  # type: ignore[arg-type]  # None removes

    def cancel(self, job_group: str) -> None:
        """Cancel the running Spark jobs of `job_group` (interrupting their tasks)."""
        if self._spark is not None:
            self._spark.sparkContext.cancelJobGroup(job_group)

    def _evaluate_dataset(
        self, event: Mapping[str, Any], ref: DatasetRef, groups: Sequence[BoundRules]
    ) -> list[RuleResult]:
        dataset = event[ref.role][ref.index]
        facets = dataset.get("facets") if isinstance(dataset, Mapping) else None
        rules = [r for g in groups for r in g.rules]
        fmt = next((g.format for g in groups if g.format), None)
        try:
            df = self.read(ref, facets, fmt)
            results = evaluate_dataframe(df, rules)
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
            return [error_result(r, str(exc)) for r in rules]
        except Exception as exc:
            log.exception("evaluation of %s failed", ref.key)
            return [error_result(r, f"evaluation failed: {exc}") for r in rules]

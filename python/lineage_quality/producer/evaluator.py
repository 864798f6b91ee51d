"""Evaluate the rules bound to an event's datasets, with a SparkSession of our own.

Our session runs without the OpenLineage listener, so the producer's own evaluation queries never
appear as lineage jobs downstream.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import SparkSession

from lineage_quality.contracts import BoundRules, rules_for
from lineage_quality.datasets import read_dataset
from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.errors import DatasetError
from lineage_quality.producer.enrich import DatasetRef, datasets_of
from lineage_quality.results import RuleResult, error_result

log = logging.getLogger(__name__)

APP_NAME = "lineage-quality-evaluator"


def evaluator_session(master: str | None = None) -> SparkSession:
    builder = (
        SparkSession.builder.appName(APP_NAME)
        .config("spark.extraListeners", "")  # never our own lineage: no listener here
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "16")
        # dateFormat rules: an unparseable value is null (a failure to count), never an exception.
        .config("spark.sql.legacy.timeParserPolicy", "CORRECTED")
    )
    if master:
        builder = builder.master(master)
    elif not SparkSession.getActiveSession():
        builder = builder.master("local[*]")
    return builder.getOrCreate()


class Evaluator:
    def __init__(
        self,
        bindings: Sequence[BoundRules],
        spark: SparkSession | None = None,
        master: str | None = None,
    ) -> None:
        self.bindings = list(bindings)
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

    def evaluate(self, event: Mapping[str, Any]) -> dict[DatasetRef, list[RuleResult]]:
        results: dict[DatasetRef, list[RuleResult]] = {}
        for ref, groups in self.bound(event).items():
            dataset = event[ref.role][ref.index]
            facets = dataset.get("facets") if isinstance(dataset, Mapping) else None
            rules = [r for g in groups for r in g.rules]
            fmt = next((g.format for g in groups if g.format), None)
            try:
                df = read_dataset(self.spark, ref.namespace, ref.name, facets, fmt)
                results[ref] = evaluate_dataframe(df, rules)
            except DatasetError as exc:
                log.warning("%s: %s", ref.key, exc)
                results[ref] = [error_result(r, str(exc)) for r in rules]
            except Exception as exc:
                log.exception("evaluation of %s failed", ref.key)
                results[ref] = [error_result(r, f"evaluation failed: {exc}") for r in rules]
        return results

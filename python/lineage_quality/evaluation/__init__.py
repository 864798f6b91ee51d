"""What a dataset of an event is, and its evaluation: the refs of an event's datasets
(`refs`), what the run wrote (`written`), how a dataset is read (`datasets`, `storage`), the
evaluator's Spark session and JVM (`spark_conf`, `spark_line`, `jvm`, `jvm_output`), the evaluator
itself (`evaluator`) and one event's evaluation in the background (`background`). Below the
producer: `serve`, `check`, in-driver mode and `bench` use it alike; it never imports the
producer. The Spark-backed parts load on first use, so refs import no Spark."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lineage_quality.values.event import datasets_of
from lineage_quality.values.refs import DatasetRef

if TYPE_CHECKING:
    from lineage_quality.evaluation.evaluator import Evaluator

__all__ = ["DatasetRef", "Evaluator", "datasets_of"]


def __getattr__(name: str) -> Any:
    if name == "Evaluator":
        from lineage_quality.evaluation.evaluator import Evaluator

        return Evaluator
    raise AttributeError(name)

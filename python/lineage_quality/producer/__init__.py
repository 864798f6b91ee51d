"""The producer service: receive, spool, evaluate, enrich, forward.

`enrich`, `Spool` and `Forwarder` import no Spark; the Spark-backed parts load on first use, so
the pure core can be imported (and unit-tested) without a JVM.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lineage_quality.producer.enrich import enrich
from lineage_quality.producer.forward import Forwarder
from lineage_quality.producer.spool import Spool
from lineage_quality.values.refs import DatasetRef

if TYPE_CHECKING:
    from lineage_quality.evaluation.evaluator import Evaluator
    from lineage_quality.producer.service import Producer

__all__ = ["DatasetRef", "Evaluator", "Forwarder", "Producer", "Spool", "enrich"]


def __getattr__(name: str) -> Any:
    if name == "Evaluator":
        from lineage_quality.evaluation.evaluator import Evaluator

        return Evaluator
    if name == "Producer":
        from lineage_quality.producer.service import Producer

        return Producer
    raise AttributeError(name)

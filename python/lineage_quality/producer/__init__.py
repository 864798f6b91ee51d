"""The producer service: receive, spool, evaluate, enrich, forward."""

from lineage_quality.producer.enrich import DatasetRef, enrich
from lineage_quality.producer.evaluator import Evaluator
from lineage_quality.producer.forward import Forwarder
from lineage_quality.producer.service import Producer
from lineage_quality.producer.spool import Spool

__all__ = ["DatasetRef", "Evaluator", "Forwarder", "Producer", "Spool", "enrich"]

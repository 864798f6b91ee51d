"""What a dataset of an event is, for evaluating its rules (issue 38 moves the evaluator here,
below the producer that runs it)."""

from __future__ import annotations

from lineage_quality.evaluation.refs import DatasetRef, datasets_of

__all__ = ["DatasetRef", "datasets_of"]

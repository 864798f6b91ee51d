"""Result sinks: where the verdicts of an evaluated event go besides the event itself
(e.g. DataHub assertion run events, `lineage_quality.datahub`).

A sink gets the raw event and its results right after evaluation; when an evaluation missed its
deadline, it gets the ERROR results at the deadline and the real ones again when they are known
(with the follow-up event). A sink must not block
(queue and write in the background); whatever it raises is logged and never stops the event
from being enriched and forwarded.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from lineage_quality.lineage.model import Mark
from lineage_quality.results import RuleResult
from lineage_quality.values.refs import DatasetRef

log = logging.getLogger(__name__)


class ResultSink(Protocol):
    def emit(
        self, event: Mapping[str, Any], results: Mapping[DatasetRef, Sequence[RuleResult]]
    ) -> None: ...

    def close(self) -> None: ...


def emit_results(
    sinks: Sequence[ResultSink],
    event: Mapping[str, Any],
    results: Mapping[DatasetRef, Sequence[RuleResult]],
) -> None:
    for sink in sinks:
        try:
            sink.emit(event, results)
        except Exception:
            log.exception("result sink %s failed; the event goes on", type(sink).__name__)


@runtime_checkable
class MarkSink(Protocol):
    """A result sink that also takes the marks from upstream of each COMPLETE's outputs (issue
    39; DataHub's propagated assertions), empty ones included (a mark gone is news too)."""

    def emit_marks(
        self, event: Mapping[str, Any], marks: Mapping[DatasetRef, Sequence[Mark]]
    ) -> None: ...


def emit_marks(
    sinks: Sequence[ResultSink],
    event: Mapping[str, Any],
    marks: Mapping[DatasetRef, Sequence[Mark]],
) -> None:
    for sink in sinks:
        if not isinstance(sink, MarkSink):
            continue
        try:
            sink.emit_marks(event, marks)
        except Exception:
            log.exception("result sink %s failed on marks; the event goes on", type(sink).__name__)


def close_sinks(sinks: Sequence[ResultSink]) -> None:
    for sink in sinks:
        try:
            sink.close()
        except Exception:
            log.exception("closing result sink %s failed", type(sink).__name__)

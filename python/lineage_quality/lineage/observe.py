"""What one COMPLETE event and its verdicts say along lineage: the run's lineage (`run_lineage`)
and the rules that failed on each of its datasets (`failures_of`). Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lineage_quality.lineage.column_lineage import column_lineage
from lineage_quality.lineage.model import Failure, Read, RunLineage, Written
from lineage_quality.results import NOT_EVALUATED, RuleResult, Status
from lineage_quality.values.event import Event
from lineage_quality.values.refs import DatasetRef

_FAILED = (Status.FAILED, Status.ERROR)


def event_ms(event: Event | Mapping[str, Any]) -> int:
    """The event's time in epoch milliseconds (now when it has none, or none with a zone)."""
    return Event.of(event).time_ms


def run_lineage(given: Event | Mapping[str, Any]) -> RunLineage:
    """The run's inputs (with the versions read) and outputs (with their column lineage)."""
    event = Event.of(given)
    reads: list[Read] = []
    writes: list[Written] = []
    for dataset in event.datasets:
        if dataset.ref.role == "inputs":
            reads.append(Read(dataset.key, dataset.version))
            continue
        columns, sources = column_lineage(dataset.facets)
        writes.append(Written(dataset.key, dataset.version, columns, sources, dataset.tables))
    return RunLineage(
        event.run_id or "",
        event.job_label,
        event.time_ms,
        tuple(dict.fromkeys(reads)),
        tuple(writes),
    )


def evaluated(results: Sequence[RuleResult]) -> bool:
    """Rules were evaluated on the dataset (not all skipped: the run failed, the data gone)."""
    return any(r.skip_reason not in NOT_EVALUATED for r in results)


def failures_of(results: Sequence[RuleResult]) -> tuple[Failure, ...]:
    """The rules that failed, or could not run, among a dataset's verdicts."""
    return tuple(
        dict.fromkeys(
            Failure(
                r.rule.name or r.rule.id,
                r.rule.effective_action.value,
                r.status.value,
                r.rule.column,
            )
            for r in results
            if r.status in _FAILED
        )
    )


def by_key(
    results: Mapping[DatasetRef, Sequence[RuleResult]], role: str
) -> dict[str, list[RuleResult]]:
    """The verdicts of the event's `role` datasets, by dataset key (a dataset listed twice:
    its verdicts together)."""
    found: dict[str, list[RuleResult]] = {}
    for ref, rule_results in results.items():
        if ref.role == role:
            found.setdefault(ref.key, []).extend(rule_results)
    return found

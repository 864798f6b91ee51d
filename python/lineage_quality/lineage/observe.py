"""What one COMPLETE event and its verdicts say along lineage: the run's lineage (`run_lineage`)
and the rules that failed on each of its datasets (`failures_of`). Pure."""

from __future__ import annotations

import datetime
import time
from collections.abc import Mapping, Sequence
from typing import Any

from lineage_quality.lineage.column_lineage import column_lineage
from lineage_quality.lineage.model import Failure, Read, RunLineage, Written
from lineage_quality.results import NOT_EVALUATED, RuleResult, Status
from lineage_quality.values.refs import DatasetRef, datasets_of, table_names

_FAILED = (Status.FAILED, Status.ERROR)


def event_ms(event: Mapping[str, Any]) -> int:
    """The event's time in epoch milliseconds (now when it has none, or none with a zone)."""
    try:
        parsed = datetime.datetime.fromisoformat(str(event.get("eventTime")))
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        return int(time.time() * 1000)
    return int(parsed.timestamp() * 1000)


def version_of(dataset: Any) -> str | None:
    """The dataset's table version (its `version` facet), where the format has one."""
    if not isinstance(dataset, Mapping):
        return None
    facets = dataset.get("facets")
    version = facets.get("version") if isinstance(facets, Mapping) else None
    number = version.get("datasetVersion") if isinstance(version, Mapping) else None
    return None if number is None else str(number)


def run_lineage(event: Mapping[str, Any]) -> RunLineage:
    """The run's inputs (with the versions read) and outputs (with their column lineage)."""
    run = event.get("run")
    run_id = run.get("runId") if isinstance(run, Mapping) else None
    job = event.get("job")
    job = job if isinstance(job, Mapping) else {}
    reads: list[Read] = []
    writes: list[Written] = []
    for ref in datasets_of(event):
        dataset = event[ref.role][ref.index]
        if ref.role == "inputs":
            reads.append(Read(ref.key, version_of(dataset)))
            continue
        facets = dataset.get("facets")
        columns, sources = column_lineage(facets if isinstance(facets, Mapping) else None)
        tables = tuple(table_names(facets if isinstance(facets, Mapping) else None))
        writes.append(Written(ref.key, version_of(dataset), columns, sources, tables))
    return RunLineage(
        str(run_id) if isinstance(run_id, str) else "",
        f"{job.get('namespace')}/{job.get('name')}",
        event_ms(event),
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

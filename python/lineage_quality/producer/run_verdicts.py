"""A run's verdicts for orchestrators: what `GET /api/v1/runs/{runId}` answers and what
`lineage-quality gate` decides from it. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lineage_quality.rawjson import storable
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Action
from lineage_quality.values.event import Event
from lineage_quality.values.refs import DatasetRef


def run_ids(event: Event | Mapping[str, Any]) -> list[str]:
    """The event's run id, its parent's and its root's: an orchestrator knows its own task's run
    (e.g. Airflow passes `spark.openlineage.parentRunId`); the listener makes that the parent of
    the application's run and the root of each action's run. Verdicts are found under any."""
    return list(storable_ids(Event.of(event).run_ids))


def storable_ids(run_ids: Iterable[str]) -> tuple[str, ...]:
    """`run_ids` as keys of the run bookkeeping (SQLite): a lone surrogate kept as its escape,
    each once still (an escape may equal another id as written). Kafka in's skeleton keys its
    runs with it too."""
    return tuple(dict.fromkeys(map(storable, run_ids)))


def verdict_rows(
    event: Event | Mapping[str, Any], results: Mapping[DatasetRef, Sequence[RuleResult]]
) -> list[dict[str, Any]]:
    job = Event.of(event).job_label
    rows = []
    for ref, rule_results in results.items():
        for r in rule_results:
            rows.append(
                {
                    "job": job,
                    "dataset": ref.key,
                    "role": ref.role,
                    "rule": r.rule.name or r.rule.id,
                    "status": r.status.value,
                    "action": r.rule.effective_action.value,
                    "severity": r.rule.severity,
                    "expected": r.expected,
                    "actual": r.actual_text(),
                    "message": r.message,
                }
            )
    return rows


def blocking(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The rows that stop the pipeline: a BLOCK rule that FAILED or could not run (an ERROR is
    never a pass)."""
    return [
        r
        for r in rows
        if r["action"] == Action.BLOCK.value
        and r["status"] in (Status.FAILED.value, Status.ERROR.value)
    ]


def describe(row: Mapping[str, Any]) -> str:
    actual = row.get("actual") or row.get("message") or ""
    return (
        f"{row['dataset']} {row['rule']}: {row['status']} (expected {row['expected']}, "
        f"actual {actual}) [{row['job']}]"
    )

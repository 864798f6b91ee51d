"""A run's verdicts for orchestrators: what `GET /api/v1/runs/{runId}` answers and what
`lineage-quality gate` decides from it; and the failed runs the spool remembers (a FAIL event
first: the run's outputs are not evaluated)."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from lineage_quality.evaluation.refs import DatasetRef
from lineage_quality.rawjson import storable
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Action

log = logging.getLogger(__name__)


def run_ids(event: Mapping[str, Any]) -> list[str]:
    """The event's run id, its parent's and its root's: an orchestrator knows its own task's run
    (e.g. Airflow passes `spark.openlineage.parentRunId`); the listener makes that the parent of
    the application's run and the root of each action's run. Verdicts are found under any."""
    run = event.get("run") or {}
    ids = [run.get("runId")]
    facet = (run.get("facets") or {}).get("parent") or {}
    if isinstance(facet, Mapping):
        for part in (facet, facet.get("root") or {}):
            link = part.get("run") if isinstance(part, Mapping) else None
            if isinstance(link, Mapping):
                ids.append(link.get("runId"))
    # keys of the run bookkeeping (SQLite): a lone surrogate is kept as its escape
    return list(dict.fromkeys(storable(i) for i in ids if isinstance(i, str) and i))


def verdict_rows(
    event: Mapping[str, Any], results: Mapping[DatasetRef, Sequence[RuleResult]]
) -> list[dict[str, Any]]:
    job = event.get("job") or {}
    rows = []
    for ref, rule_results in results.items():
        for r in rule_results:
            rows.append(
                {
                    "job": f"{job.get('namespace')}/{job.get('name')}",
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


class _FailedRuns(Protocol):
    def mark_run_failed(self, run_id: str) -> None: ...

    def run_failed(self, run_id: str) -> bool: ...


def remember_failure(spool: _FailedRuns, event: Mapping[str, Any]) -> None:
    """Keep that the run of a FAIL event failed (its outputs are then not evaluated)."""
    run_id = (event.get("run") or {}).get("runId")
    if isinstance(run_id, str):
        run_id = storable(run_id)
        try:
            spool.mark_run_failed(run_id)
        except sqlite3.Error as exc:
            log.warning("could not remember that run %s failed: %s", run_id, exc)


def run_failed(spool: _FailedRuns, event: Mapping[str, Any]) -> bool:
    """Whether the run of `event` failed (a FAIL event came first)."""
    run_id = (event.get("run") or {}).get("runId")
    try:
        return isinstance(run_id, str) and spool.run_failed(storable(run_id))
    except sqlite3.Error:
        return False

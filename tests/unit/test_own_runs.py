"""OwnRunFilter: the evaluation's own Spark runs are dropped, every other event passes in order.

Events are shaped like those openlineage-spark 1.53 sends (seen in tests/e2e): the START of a SQL
execution has no `spark_jobDetails`; the events of a Spark job's start have it, with `jobGroup`.
"""

from __future__ import annotations

import json
from typing import Any

from lineage_quality.driver.own_runs import REMEMBERED_RUNS, OwnRunFilter

PREFIX = "lq-event-"
APP = "00000000-0000-0000-0000-00000000a000"


def event(run: str, kind: str, group: str | None = None, jobs: bool = False) -> dict[str, Any]:
    facets: dict[str, Any] = {"parent": {"run": {"runId": APP}, "job": {"name": "app"}}}
    if group is not None or jobs:
        facets["spark_jobDetails"] = {"jobId": 1, "jobGroup": group}
    return {
        "eventType": kind,
        "run": {"runId": run, "facets": facets},
        "job": {"namespace": "n", "name": f"app.{run}", "facets": {"jobType": {"jobType": "JOB"}}},
    }


def app_event(kind: str) -> dict[str, Any]:
    return {
        "eventType": kind,
        "run": {"runId": APP, "facets": {}},
        "job": {"namespace": "n", "name": "app", "facets": {"jobType": {"jobType": "APPLICATION"}}},
    }


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def offer(f: OwnRunFilter, e: dict[str, Any]) -> list[str]:
    return f.offer(e, json.dumps(e))


def types(bodies: list[str]) -> list[tuple[str, str]]:
    return [(json.loads(b)["run"]["runId"], json.loads(b)["eventType"]) for b in bodies]


def test_a_run_of_ours_is_dropped_whole_also_its_start_sent_before_the_job_group() -> None:
    f = OwnRunFilter(PREFIX)
    assert offer(f, event("ours", "START")) == []  # held: not known yet
    assert offer(f, event("ours", "RUNNING", group="lq-event-7-abc")) == []
    assert offer(f, event("ours", "RUNNING")) == []
    assert offer(f, event("ours", "COMPLETE")) == []
    assert f.dropped == 4 and f.holding == 0
    assert f.flush() == []


def test_a_run_of_the_job_passes_in_order_once_known() -> None:
    f = OwnRunFilter(PREFIX)
    assert offer(f, event("job", "START")) == []
    released = offer(f, event("job", "RUNNING", jobs=True))  # a Spark job, no group
    assert types(released) == [("job", "START"), ("job", "RUNNING")]
    assert types(offer(f, event("job", "COMPLETE"))) == [("job", "COMPLETE")]
    other_group = offer(f, event("job2", "RUNNING", group="nightly"))
    assert types(other_group) == [("job2", "RUNNING")]
    assert f.dropped == 0


def test_a_run_without_spark_jobs_passes_at_its_end() -> None:
    f = OwnRunFilter(PREFIX)
    assert offer(f, event("ddl", "START")) == []
    assert types(offer(f, event("ddl", "COMPLETE"))) == [("ddl", "START"), ("ddl", "COMPLETE")]
    assert offer(f, event("failed", "START")) == []
    assert types(offer(f, event("failed", "FAIL"))) == [("failed", "START"), ("failed", "FAIL")]


def test_application_events_are_never_held() -> None:
    f = OwnRunFilter(PREFIX)
    assert types(offer(f, app_event("START"))) == [(APP, "START")]
    assert types(offer(f, app_event("COMPLETE"))) == [(APP, "COMPLETE")]


def test_held_runs_pass_after_hold_seconds_and_at_flush() -> None:
    clock = Clock()
    f = OwnRunFilter(PREFIX, hold_seconds=10, clock=clock)
    offer(f, event("slow", "START"))
    clock.now = 5
    offer(f, event("other", "START"))
    assert f.expire() == []
    clock.now = 10
    assert types(f.expire()) == [("slow", "START")]
    assert types(offer(f, event("slow", "RUNNING"))) == [("slow", "RUNNING")]  # known now
    assert types(f.flush()) == [("other", "START")]
    assert f.holding == 0


def test_a_job_group_merely_containing_the_prefix_is_not_ours() -> None:
    f = OwnRunFilter(PREFIX)
    assert types(offer(f, event("r", "RUNNING", group="x-lq-event-1"))) == [("r", "RUNNING")]


def test_remembered_runs_are_bounded() -> None:
    f = OwnRunFilter(PREFIX)
    for i in range(REMEMBERED_RUNS + 5):
        offer(f, event(f"ours-{i}", "RUNNING", group="lq-event-x"))
    assert len(f._ours) == REMEMBERED_RUNS
    assert "ours-0" not in f._ours and f"ours-{REMEMBERED_RUNS + 4}" in f._ours

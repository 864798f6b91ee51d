"""In-driver mode under spark-submit with the real OpenLineage listener (the jar Maven fetched):
`lineage_quality.attach(SparkSession.builder, ...)` in the job, a file transport as the sink."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from pipeline import REPO_ROOT, read_jsonl

from lineage_quality.producer.service import JOB_GROUP_PREFIX
from lineage_quality.sparksubmit import spark_submit_path, submit_env

pytestmark = pytest.mark.e2e

JOB = Path(__file__).resolve().parent / "in_driver"
STATUS_RULE = "e2e-in-driver-orders.orders.status.invalidValues.0"


def _submit(workdir: Path, mode: str) -> dict[str, Any]:
    events, quarantine = workdir / "events.jsonl", workdir / "quarantine"
    cmd = [
        spark_submit_path(),
        "--master", "local[1]",
        "--driver-memory", "1g",
        "--conf", "spark.ui.enabled=false",
        str(JOB / "job.py"),
        str(JOB), str(workdir), str(events), str(quarantine), str(workdir / "spool.db"), mode,
    ]  # fmt: skip
    done = subprocess.run(
        cmd, cwd=REPO_ROOT, env=submit_env(), capture_output=True, text=True, timeout=600
    )
    return {
        "rc": done.returncode,
        "stdout": done.stdout,
        "stderr": done.stderr,
        "events": read_jsonl(events) if events.exists() else [],
        "orders": str(workdir / "in-driver-data" / "orders"),
        "quarantine": quarantine,
        "spool": workdir / "spool.db",
    }


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _submit(tmp_path_factory.mktemp("in-driver-fail"), "fail")


@pytest.fixture(scope="module")
def passing(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _submit(tmp_path_factory.mktemp("in-driver-pass"), "pass")


def _write_complete(run: dict[str, Any]) -> dict[str, Any]:
    (event,) = [
        e
        for e in run["events"]
        if e["eventType"] == "COMPLETE"
        and [o["name"] for o in e.get("outputs", [])] == [run["orders"]]
    ]
    return event


def _assertions(event: dict[str, Any]) -> dict[str, dict[str, Any]]:
    (out,) = event["outputs"]
    return {a["name"]: a for a in out["facets"]["dataQualityAssertions"]["assertions"]}


def _no_event_of_our_work(run: dict[str, Any]) -> None:
    events = run["events"]
    assert events, run["stdout"][-3000:]
    groups = [(e["run"]["facets"].get("spark_jobDetails") or {}).get("jobGroup") for e in events]
    assert not [g for g in groups if g and g.startswith(JOB_GROUP_PREFIX)]
    quarantine = str(run["quarantine"])
    outputs = [o["name"] for e in events for o in e.get("outputs", [])]
    assert not [o for o in outputs if o.startswith(quarantine)]
    # The job's own runs: the application, its write, its read back; nothing else.
    jobs = {e["job"]["name"] for e in events}
    assert jobs == {
        "in_driver_job",
        "in_driver_job.execute_insert_into_hadoop_fs_relation_command.in-driver-data_orders",
        "in_driver_job.map_partitions_parallel_collection",
    }, jobs


def test_a_failed_block_rule_fails_spark_submit_with_the_reason(failing: dict[str, Any]) -> None:
    assert failing["rc"] != 0, failing["stdout"][-3000:]
    assert "rows read back: 5" in failing["stdout"]  # the job itself ran to its end
    assert "lineage-quality: quality gate failed (1):" in failing["stderr"]
    line = f"file:{failing['orders']}: rule orders_amount_not_null failed: expected == 0, actual 1"
    assert line in failing["stderr"]
    # The events still went out, enriched, before the process ended.
    results = _assertions(_write_complete(failing))
    assert results["orders_amount_not_null"]["success"] is False
    assert results["orders_amount_not_null"]["params"]["action"] == "BLOCK"
    assert results["orders_id_not_null"]["success"] is True
    assert [e["eventType"] for e in failing["events"] if e["job"]["name"] == "in_driver_job"] == [
        "START",
        "COMPLETE",
    ]


def test_a_passing_run_exits_0_and_its_events_carry_the_facets(passing: dict[str, Any]) -> None:
    assert passing["rc"] == 0, passing["stdout"][-3000:] + passing["stderr"][-3000:]
    assert "quality gate failed" not in passing["stderr"] + passing["stdout"]
    event = _write_complete(passing)
    results = _assertions(event)
    assert results["orders_amount_not_null"]["success"] is True
    assert results["orders_id_not_null"]["success"] is True
    tests = event["run"]["facets"]["test"]["tests"]
    assert {t["name"] for t in tests} >= {"orders_amount_not_null", "orders_status_valid"}
    assert [e["eventType"] for e in passing["events"] if e["job"]["name"] == "in_driver_job"] == [
        "START",
        "COMPLETE",
    ]


def test_no_event_of_the_evaluation_is_forwarded(
    passing: dict[str, Any], failing: dict[str, Any]
) -> None:
    _no_event_of_our_work(passing)
    _no_event_of_our_work(failing)


def test_quarantined_rows_land_under_the_run_id_and_the_facet_says_where(
    spark: Any, passing: dict[str, Any]
) -> None:
    event = _write_complete(passing)
    status = _assertions(event)["orders_status_valid"]
    assert status["success"] is False and status["params"]["action"] == "QUARANTINE"
    run_id = event["run"]["runId"]
    folder = (
        passing["quarantine"]
        / f"run_id={run_id}"
        / ("dataset=" + ("file:" + passing["orders"]).replace(":", "%3A").replace("/", "%2F"))
        / f"rule_id={STATUS_RULE}"
    )
    assert status["params"]["quarantine"] == {"path": str(folder), "rows": 2}
    rows = spark.read.parquet(str(folder)).collect()
    assert sorted((r["id"], r["status"], r["lq_rule_id"]) for r in rows) == [
        (2, "bogus", STATUS_RULE),
        (4, "OPEN", STATUS_RULE),
    ]


def test_zero_code_change_variant_with_py_files_sitecustomize(tmp_path: Path) -> None:
    """The unchanged e2e job; --py-files sitecustomize.py + --conf attach lineage-quality."""
    events = tmp_path / "events.jsonl"
    env = submit_env(
        {
            "OPENLINEAGE__TRANSPORT__TYPE": "file",
            "OPENLINEAGE__TRANSPORT__LOG_FILE_PATH": str(events),
            "OPENLINEAGE__TRANSPORT__APPEND": "true",
        }
    )
    raw, clean = tmp_path / "e2e-data" / "raw", tmp_path / "e2e-data" / "clean"
    cmd = [
        spark_submit_path(),
        "--master", "local[1]",
        "--driver-memory", "1g",
        "--conf", "spark.ui.enabled=false",
        "--py-files", str(REPO_ROOT / "examples" / "in-driver" / "sitecustomize.py"),
        "--conf", f"spark.lineageQuality.contracts={REPO_ROOT / 'tests' / 'e2e' / 'contracts'}",
        str(REPO_ROOT / "tests" / "e2e" / "jobs" / "clean_job.py"), str(raw), str(clean),
    ]  # fmt: skip
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    # raw_id_not_null (severity error -> BLOCK) fails on raw: written by one run, read by the next.
    assert done.returncode != 0, done.stdout[-3000:]
    assert (
        "lineage-quality: quality gate failed (1):\n"
        f"  file:{raw}: rule raw_id_not_null failed: expected == 0, actual 1"
    ) in done.stderr
    forwarded = read_jsonl(events)
    enriched = [
        e for e in forwarded for d in e.get("inputs", []) + e.get("outputs", [])
        if "dataQualityAssertions" in d.get("facets", {}) | d.get("inputFacets", {})
    ]  # fmt: skip
    assert enriched
    groups = [(e["run"]["facets"].get("spark_jobDetails") or {}).get("jobGroup") for e in forwarded]
    assert not [g for g in groups if g and g.startswith(JOB_GROUP_PREFIX)]
    # Everything was forwarded: the default per-process spool is gone.
    assert list((tmp_path / ".lineage-quality").glob("driver-*")) == []

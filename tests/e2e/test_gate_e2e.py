"""`lineage-quality gate` against the sidecar after a real listener run (issue 10.2): exit 1 when a
BLOCK rule failed (listing it), 0 when none did, 2 for an unknown run."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.transport.file import FileConfig, FileTransport
from pipeline import HERE, REPO_ROOT, producer_for, read_jsonl

from lineage_quality.cli import main
from lineage_quality.sparksubmit import listener_args, spark_submit

pytestmark = pytest.mark.e2e


def run_task(url: str, parent: str, raw: Path, clean: Path, tmp: Path, *args: str) -> None:
    """The pipeline as an orchestrator's task `parent` would run it, with the real listener."""
    log = tmp / "spark-submit.log"
    result = spark_submit(
        [
            *listener_args(REPO_ROOT, url, {
                "spark.openlineage.namespace": "e2e-gate", "spark.ui.enabled": "false",
                "spark.openlineage.parentRunId": parent,
                "spark.openlineage.parentJobNamespace": "airflow",
                "spark.openlineage.parentJobName": "dag.clean_task",
            }, master="local[1]"),
            str(HERE / "jobs" / "clean_job.py"), str(raw), str(clean), *args,
        ],
        cwd=REPO_ROOT,
        log_file=log,
    )  # fmt: skip
    assert result.returncode == 0, log.read_text()[-4000:]


def test_gate_blocks_on_a_failed_block_rule_and_passes_otherwise(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parent = str(uuid.uuid4())  # what an orchestrator passes to the job and then to `gate`
    sink = tmp_path / "events.jsonl"
    transport = FileTransport(FileConfig(log_file_path=str(sink), append=True))
    data = tmp_path / "e2e-data"
    with producer_for(spark, transport, tmp_path) as producer:
        run_task(producer.url, parent, data / "raw", data / "clean", tmp_path)
        url = producer.url
        # The orchestrator's next step: wait for the verdicts of its task's runs.
        assert main(["gate", "--run-id", parent, "--url", url, "--wait", "120"]) == 1
        out = capsys.readouterr().out
        # raw_id_not_null is severity error -> BLOCK, and fails (one null id)
        assert "BLOCK" in out and "raw_id_not_null: FAILED (expected == 0, actual 1)" in out
        # the clean_* rules fail too but are ALERT (no severity): they never block
        assert "clean_id_unique" not in out
        # The application's run holds its actions' verdicts too: the same BLOCK failure.
        events = read_jsonl(sink)
        (app,) = {e["run"]["runId"] for e in events if e["job"]["name"] == "e2e_clean_job"}
        assert main(["gate", "--run-id", app, "--url", url]) == 1
        capsys.readouterr()
        # A job of the run whose verdicts hold no failed BLOCK rule passes the gate: the
        # map_partitions action reads nothing bound.
        job = "e2e-gate/e2e_clean_job.map_partitions_parallel_collection"
        assert main(["gate", "--run-id", parent, "--url", url, "--job", job]) == 0
        assert "0 failed BLOCK rule(s)" in capsys.readouterr().err
        assert main(["gate", "--run-id", str(uuid.uuid4()), "--url", url, "--wait", "1"]) == 2
        assert "unknown run" in capsys.readouterr().err

        # The same pipeline on data without a null id: a whole run, every job, passes the gate,
        # though its ALERT rules (clean_id_unique, clean_status_accepted) still fail.
        passing = str(uuid.uuid4())
        # (its own folder: the contracts bind */e2e-data/raw and */e2e-data/clean)
        again = tmp_path / "second" / "e2e-data"
        run_task(producer.url, passing, again / "raw", again / "clean", tmp_path, "valid")
        assert main(["gate", "--run-id", passing, "--url", url, "--wait", "120"]) == 0
        err = capsys.readouterr().err
        assert "0 failed BLOCK rule(s)" in err
        # the verdicts were there (not an empty pass): the run's status lists them
        status, doc = producer.runs.status(passing)
        verdicts = doc["verdicts"]
        assert status == 200
        assert any(v["rule"] == "raw_id_not_null" and v["status"] == "PASSED" for v in verdicts)
        assert any(v["rule"] == "clean_id_unique" and v["status"] == "FAILED" for v in verdicts)

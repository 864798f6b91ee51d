"""In-driver mode with the same outputs as `serve` (issue 38, step 4): `attach(...,
outputs=[DataHub MCP file, webhook])` under spark-submit with the real listener. The failed
QUARANTINE rule alerts the webhook before the job ends, and every rule's assertion and run
event are in the MCP file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pipeline import REPO_ROOT, read_jsonl

from flaky_webhook import FlakyWebhook
from lineage_quality.sparksubmit import spark_submit_path, submit_env

pytestmark = pytest.mark.e2e

JOB = Path(__file__).resolve().parent / "in_driver"
RULES = {"orders_id_not_null", "orders_amount_not_null", "orders_status_valid"}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")
    workdir = tmp_path_factory.mktemp("in-driver-outputs")
    hook = FlakyWebhook()
    hook.up.set()
    mcps, events = workdir / "assertions.json", workdir / "events.jsonl"
    outputs = [{"type": "datahub-file", "path": str(mcps)}, {"type": "webhook", "url": hook.url}]
    cmd = [
        spark_submit_path(),
        "--master", "local[1]",
        "--driver-memory", "1g",
        "--conf", "spark.ui.enabled=false",
        str(JOB / "job.py"),
        str(JOB), str(workdir), str(events), str(workdir / "quarantine"),
        str(workdir / "spool.db"), "pass", json.dumps(outputs),
    ]  # fmt: skip
    try:
        done = subprocess.run(
            cmd, cwd=REPO_ROOT, env=submit_env(), capture_output=True, text=True, timeout=600
        )
    finally:
        hook.close()
    mcp_list = json.loads(mcps.read_text()) if mcps.exists() else []
    return done, hook.taken, mcp_list, read_jsonl(events) if events.exists() else []


def test_attach_sends_the_alerts_of_failed_rules_to_the_webhook(run: Any) -> None:
    done, alerts, _, events = run
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert events  # forwarded as ever
    assert alerts  # the QUARANTINE rule failed: an alert for each run and dataset it failed on
    for alert in alerts:
        assert alert["dataset"]["name"].endswith("/in-driver-data/orders"), alert
        assert [f["rule"] for f in alert["failed"]] == ["orders_status_valid"], alert


def test_attach_writes_the_datahub_assertions_to_the_mcp_file(run: Any) -> None:
    done, _, mcps, _ = run
    assert done.returncode == 0, done.stderr[-3000:]
    infos = {
        m["entityUrn"]: m["aspect"]["json"]["customProperties"]["name"]
        for m in mcps
        if m.get("aspectName") == "assertionInfo"
    }
    assert set(infos.values()) >= RULES, infos  # with the schema's own rules
    runs = [m for m in mcps if m.get("aspectName") == "assertionRunEvent"]
    assert {r["entityUrn"] for r in runs} == set(infos)
    results = {r["aspect"]["json"]["result"]["type"] for r in runs}
    assert results == {"SUCCESS", "FAILURE"}  # the status rule failed, the others passed


def test_zero_code_change_variant_takes_the_outputs_as_a_conf(tmp_path: Path) -> None:
    """sitecustomize + `--conf spark.lineageQuality.outputs=[...]`: the same outputs, no code."""
    pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")
    events, mcps = tmp_path / "events.jsonl", tmp_path / "assertions.json"
    env = submit_env(
        {
            "OPENLINEAGE__TRANSPORT__TYPE": "file",
            "OPENLINEAGE__TRANSPORT__LOG_FILE_PATH": str(events),
            "OPENLINEAGE__TRANSPORT__APPEND": "true",
        }
    )
    outputs = json.dumps([{"type": "datahub-file", "path": str(mcps), "env": "DEV"}])
    raw, clean = tmp_path / "e2e-data" / "raw", tmp_path / "e2e-data" / "clean"
    cmd = [
        spark_submit_path(),
        "--master", "local[1]",
        "--driver-memory", "1g",
        "--conf", "spark.ui.enabled=false",
        "--py-files", str(REPO_ROOT / "examples" / "in-driver" / "sitecustomize.py"),
        "--conf", f"spark.lineageQuality.contracts={REPO_ROOT / 'tests' / 'e2e' / 'contracts'}",
        "--conf", f"spark.lineageQuality.outputs={outputs}",
        str(REPO_ROOT / "tests" / "e2e" / "jobs" / "clean_job.py"), str(raw), str(clean), "valid",
    ]  # fmt: skip
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    records = json.loads(mcps.read_text())
    runs = [r for r in records if r.get("aspectName") == "assertionRunEvent"]
    assert runs
    # env DEV: the option reached the DataHub output
    assert all(",DEV)" in r["aspect"]["json"]["asserteeUrn"] for r in runs), runs[0]
    # everything was forwarded: the default per-process spool (and outbox) are gone
    assert list((tmp_path / ".lineage-quality").glob("driver-*")) == []

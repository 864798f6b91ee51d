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

"""Alerts and metrics after a real listener run (issue 10.4, 10.5), with one spark-submit:

- a local webhook, down (503) while the run is evaluated, then up, receives exactly one alert per
  run and dataset with an alerting failure, also when the COMPLETE events come twice; a producer
  restart that takes the listener's events again alerts nobody twice;
- `/metrics`, scraped with the API key, agrees with the run: events received == events the
  listener sent == events forwarded, assertions by result/severity/action == the run facets'
  tests, one alert sent per key, the failed deliveries counted.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.transport.file import FileConfig, FileTransport
from pipeline import HERE, REPO_ROOT, RecordingSpool, read_jsonl
from prometheus_client.parser import text_string_to_metric_families

from flaky_webhook import FlakyWebhook
from lineage_quality.contracts import load_contracts
from lineage_quality.producer import Evaluator, Forwarder, Producer
from lineage_quality.producer.alert_outbox import AlertOutbox, outbox_path
from lineage_quality.producer.alert_sender import AlertSender, Webhook
from lineage_quality.producer.settings import Settings
from lineage_quality.sparksubmit import listener_args, spark_submit

pytestmark = pytest.mark.e2e

KEY = "e2e-act-api-key-0123456789"
MARQUEZ_WEB = "http://marquez.example:3000"
ALERTING = {"ALERT", "BLOCK", "QUARANTINE", "CORRECT"}


@pytest.fixture
def webhook() -> Iterator[FlakyWebhook]:
    hook = FlakyWebhook()
    yield hook
    hook.close()


def make_producer(spark: Any, workdir: Path, hook: FlakyWebhook) -> Producer:
    spool = RecordingSpool(workdir / "spool.db")
    sender = AlertSender(
        AlertOutbox(outbox_path(spool.path)), [Webhook(hook.url)], retry_initial=0.2, retry_max=1
    )
    sink = FileTransport(FileConfig(log_file_path=str(workdir / "events.jsonl"), append=True))
    return Producer(
        Evaluator(load_contracts([HERE / "contracts"]), spark=spark),
        Forwarder(sink),
        spool,
        Settings.of(port=0, api_key=KEY, marquez_web_url=MARQUEZ_WEB),
        alerts=sender,
    )


def scrape(producer: Producer) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    request = urllib.request.Request(
        producer.url + "/metrics", headers={"Authorization": f"Bearer {KEY}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def total(metrics: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str) -> float:
    return sum(v for (n, _), v in metrics.items() if n == name)


def wait_until(condition: Callable[[], bool], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def post(producer: Producer, body: str) -> int:
    request = urllib.request.Request(
        producer.url + "/api/v1/lineage",
        data=body.encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {KEY}"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return int(response.status)


def test_alerts_once_per_run_and_dataset_and_metrics_agree_with_the_run(
    spark: Any, tmp_path: Path, webhook: FlakyWebhook
) -> None:
    producer = make_producer(spark, tmp_path, webhook)
    producer.start()
    try:
        log = tmp_path / "spark-submit.log"
        data = tmp_path / "e2e-data"
        conf = {
            "spark.openlineage.namespace": "e2e-act",
            "spark.ui.enabled": "false",
            "spark.openlineage.transport.auth.type": "api_key",
            "spark.openlineage.transport.auth.apiKey": KEY,
        }
        result = spark_submit(
            [
                *listener_args(REPO_ROOT, producer.url, conf, master="local[1]"),
                str(HERE / "jobs" / "clean_job.py"), str(data / "raw"), str(data / "clean"),
            ],
            cwd=REPO_ROOT,
            log_file=log,
        )  # fmt: skip
        assert result.returncode == 0, log.read_text()[-4000:]
        assert producer.spool.wait_empty(timeout=300), "producer did not forward every event"
        sent = list(producer.spool.received)  # type: ignore[attr-defined]
        # The same write's COMPLETE again, while the alerts are still undelivered (a sender's
        # retry; some write shapes make the listener send two): no second alert may come of it.
        again_completes = [b for b in sent if json.loads(b)["eventType"] == "COMPLETE"]
        for body in again_completes:
            assert post(producer, body) == 201
        assert producer.spool.wait_empty(timeout=300)
        events = read_jsonl(tmp_path / "events.jsonl")
        assert len(events) == len(sent) + len(again_completes)

        # What the forwarded events say should alert: (run, dataset) with a failed assertion
        # whose action alerts (FAILED or ERROR: an ERROR is never a pass).
        expected_keys = set()
        for e in events:
            for role, facets_key in (("inputs", "inputFacets"), ("outputs", "facets")):
                for ds in e.get(role) or []:
                    facet = (ds.get(facets_key) or {}).get("dataQualityAssertions") or {}
                    if any(
                        not a["success"] and a["params"]["action"] in ALERTING
                        for a in facet.get("assertions", [])
                    ):
                        expected_keys.add((e["run"]["runId"], f"{ds['namespace']}:{ds['name']}"))
        # raw as the first action's output and the second's input, clean as its output
        assert len(expected_keys) == 3, expected_keys

        # The webhook is down: the alerts wait in the outbox, nothing is lost or given up.
        assert wait_until(lambda: webhook.refused >= len(expected_keys))
        assert producer.alerts is not None
        assert producer.alerts.outbox.pending() == len(expected_keys)
        assert webhook.taken == []
        webhook.up.set()
        assert wait_until(lambda: producer.alerts.outbox.pending() == 0)  # type: ignore[union-attr]
        time.sleep(1.5)  # past the longest back-off: no second delivery of anything
        keys = [
            (a["runId"], f"{a['dataset']['namespace']}:{a['dataset']['name']}")
            for a in webhook.taken
        ]
        assert sorted(keys) == sorted(expected_keys)  # exactly one per run and dataset
        raw_alert = next(a for a in webhook.taken if a["dataset"]["name"].endswith("/raw")
                         and a["dataset"]["role"] == "outputs")  # fmt: skip
        blocked = next(f for f in raw_alert["failed"] if f["rule"] == "raw_id_not_null")
        assert blocked == {
            "rule": "raw_id_not_null", "status": "FAILED", "severity": "error", "action": "BLOCK",
            "expected": "== 0", "actual": "1", "message": blocked["message"],
        }  # fmt: skip
        assert raw_alert["url"].startswith(MARQUEZ_WEB + "/lineage/dataset/file/%2F")
        assert raw_alert["job"]["namespace"] == "e2e-act"

        # /metrics against the run.
        m = scrape(producer)
        assert m[("lineage_quality_events_received_total", ())] == len(events)
        assert m[("lineage_quality_events_forwarded_total", ())] == len(events)
        assert total(m, "lineage_quality_events_refused_total") == 0
        assert m[("lineage_quality_spool_events", ())] == 0
        tests = Counter(
            (t["params"]["status"], t.get("severity") or "none", t["params"]["action"])
            for e in events
            for t in ((e["run"].get("facets") or {}).get("test") or {}).get("tests", [])
        )
        assertions = Counter(
            {
                (dict(labels)["result"], dict(labels)["severity"], dict(labels)["action"]): v
                for (name, labels), v in m.items()
                if name == "lineage_quality_assertions_total"
            }
        )
        assert tests and assertions == tests
        assert tests[("FAILED", "error", "BLOCK")] >= 1
        evaluated = sum(1 for e in events if (e["run"].get("facets") or {}).get("test"))
        assert m[("lineage_quality_evaluations_total", (("outcome", "ok"),))] == evaluated
        assert m[("lineage_quality_evaluation_seconds_count", ())] == evaluated
        label = (("sink", "generic:http://127.0.0.1"),)
        assert m[("lineage_quality_alerts_sent_total", label)] == len(expected_keys)
        assert m[("lineage_quality_alerts_failed_total", label)] == webhook.refused
        assert m[("lineage_quality_alerts_pending", ())] == 0
    finally:
        producer.stop()

    # A producer restart, and the listener's events arrive again (a retrying sender): the
    # outbox remembers every (run, dataset) it alerted on.
    again = make_producer(spark, tmp_path, webhook)
    again.start()
    try:
        for body in sent:
            assert post(again, body) == 201
        assert again.spool.wait_empty(timeout=300)
        time.sleep(1.5)
        assert len(webhook.taken) == len(expected_keys)
        m = scrape(again)
        assert m[("lineage_quality_events_received_total", ())] == len(sent)
        assert total(m, "lineage_quality_alerts_sent_total") == 0
        replayed = read_jsonl(tmp_path / "events.jsonl")[len(events) :]
        assert len(replayed) == len(sent)
        assert total(m, "lineage_quality_assertions_total") == sum(
            len(((e["run"].get("facets") or {}).get("test") or {}).get("tests", []))
            for e in replayed
        )
    finally:
        again.stop()

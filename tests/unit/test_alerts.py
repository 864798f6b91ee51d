"""Alerts (issue 10.4): which results alert, the generic and Slack messages, the outbox's once per
(sink, run, dataset) across reopen, and delivery with back-off to a real local HTTP server that is
down, then up."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flaky_webhook import FlakyWebhook
from lineage_quality.engine import verdict
from lineage_quality.producer.alert_outbox import AlertOutbox, outbox_path
from lineage_quality.producer.alert_sender import AlertSender, Webhook
from lineage_quality.producer.alerts import (
    GENERIC,
    SLACK,
    alerts_for,
    marquez_dataset_url,
    parse_min_severity,
    slack_message,
)
from lineage_quality.producer.enrich import DatasetRef
from lineage_quality.results import RuleResult, error_result
from lineage_quality.rules import Operator, Rule, RuleKind, Threshold

EVENT = {
    "eventType": "COMPLETE",
    "eventTime": "2026-11-22T06:00:00.000Z",
    "run": {"runId": "run-1"},
    "job": {"namespace": "ns", "name": "job.write"},
}
OUT = DatasetRef("outputs", 0, "file", "/data/out put")
IN = DatasetRef("inputs", 0, "file", "/data/in")


def rule(name: str, severity: str | None = None, action: str | None = None) -> Rule:
    return Rule(
        id=name,
        kind=RuleKind.NULL_VALUES,
        columns=["a"],
        severity=severity,
        action=action,
        threshold=Threshold(Operator.MUST_BE, 0),
        name=name,
    )


def failed(r: Rule) -> RuleResult:
    return verdict(r, 2, 5)


def passed(r: Rule) -> RuleResult:
    return verdict(r, 0, 5)


def test_only_failures_of_alerting_actions_at_or_above_the_minimum_severity_alert() -> None:
    results = {
        OUT: [
            failed(rule("blocks", "error")),  # BLOCK
            failed(rule("warns", "warn")),  # ALERT
            failed(rule("logs", "info")),  # LOG: never alerts
            failed(rule("ignored", "error", action="IGNORE")),
            passed(rule("fine", "error")),
            error_result(rule("broken", "warn"), "column a is missing"),  # an ERROR alerts
        ],
        IN: [passed(rule("in_ok", "error"))],
    }
    (alert,) = alerts_for(EVENT, results)
    assert alert.key == ("run-1", "file:/data/out put")
    assert [f["rule"] for f in alert.payload["failed"]] == ["blocks", "warns", "broken"]
    first = alert.payload["failed"][0]
    assert first == {
        "rule": "blocks",
        "status": "FAILED",
        "severity": "error",
        "action": "BLOCK",
        "expected": "== 0",
        "actual": "2",
        "message": first["message"],
    }
    assert alert.payload["failed"][2]["message"] == "column a is missing"
    assert "url" not in alert.payload
    only_errors = alerts_for(EVENT, results, min_rank=parse_min_severity("error"))
    assert [f["rule"] for f in only_errors[0].payload["failed"]] == ["blocks"]
    assert alerts_for(EVENT, {IN: results[IN]}) == []
    assert alerts_for({**EVENT, "run": {}}, results) == []  # no run id: nothing to key it by
    with pytest.raises(ValueError, match="info, warn, error"):
        parse_min_severity("loud")


def test_marquez_link_and_slack_message() -> None:
    url = marquez_dataset_url("http://marquez:3000/", "s3://bucket", "/a/b c")
    assert url == "http://marquez:3000/lineage/dataset/s3%3A%2F%2Fbucket/%2Fa%2Fb%20c"
    (alert,) = alerts_for(EVENT, {OUT: [failed(rule("blocks", "error"))]}, 0, "http://m:3000")
    assert alert.payload["url"] == "http://m:3000/lineage/dataset/file/%2Fdata%2Fout%20put"
    message = slack_message(alert.payload)
    assert message["text"] == "1 data-quality rule(s) failed on file:/data/out put"
    body = json.dumps(message["blocks"])
    assert "*blocks* FAILED [BLOCK] expected `== 0`, actual `2`" in body
    assert "<http://m:3000/lineage/dataset/file/%2Fdata%2Fout%20put|open in Marquez>" in body
    assert "run run-1" in body


def test_outbox_keeps_one_alert_per_sink_run_and_dataset_across_reopen(tmp_path: Path) -> None:
    path = outbox_path(tmp_path / "spool.db")
    assert path.name == "spool.alerts.db"
    alerts = alerts_for(EVENT, {OUT: [failed(rule("b", "error"))]})
    sinks = [("generic http://a", GENERIC), ("slack http://b", SLACK)]
    outbox = AlertOutbox(path)
    assert outbox.offer(sinks, alerts) == 2
    assert outbox.offer(sinks, alerts) == 0  # a duplicate COMPLETE of the same write
    (first, _) = outbox.due()
    outbox.delivered(first.rowid)
    outbox.close()
    again = AlertOutbox(path)  # a producer restart re-evaluates the same event
    assert again.offer(sinks, alerts) == 0
    assert again.pending() == 1  # the Slack one was never delivered: still there
    rows = again.rows()
    assert json.loads(rows[1]["body"])["text"].startswith("1 data-quality rule(s) failed")
    assert json.loads(rows[0]["body"])["runId"] == "run-1"
    other_run = alerts_for({**EVENT, "run": {"runId": "run-2"}}, {OUT: [failed(rule("b"))]})
    assert again.offer(sinks[:1], other_run) == 1
    again.close()


@pytest.fixture
def hook() -> Iterator[FlakyWebhook]:
    h = FlakyWebhook(ok_status=200)
    yield h
    h.close()


def wait_until(condition: object, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_delivery_retries_with_back_off_until_the_webhook_is_up(
    tmp_path: Path, hook: FlakyWebhook
) -> None:
    outbox = AlertOutbox(tmp_path / "a.db")
    sent: list[str] = []
    failures: list[str] = []
    sender = AlertSender(
        outbox,
        [Webhook(hook.url)],
        retry_initial=0.05,
        retry_max=0.2,
        on_sent=sent.append,
        on_failed=failures.append,
    )
    sender.start()
    try:
        outbox.offer(sender.sinks, alerts_for(EVENT, {OUT: [failed(rule("b", "error"))]}))
        assert wait_until(lambda: hook.refused >= 3)
        assert outbox.pending() == 1 and not hook.taken
        hook.up.set()
        assert wait_until(lambda: outbox.pending() == 0)
        time.sleep(0.3)  # no second delivery
        assert len(hook.taken) == 1
        dataset = {"namespace": "file", "name": "/data/out put", "role": "outputs"}
        assert hook.taken[0]["dataset"] == dataset
        assert sent == ["generic:http://127.0.0.1"]
        assert len(failures) == hook.refused
        (row,) = outbox.rows()
        assert row["attempts"] == hook.refused and row["sent"] is not None
    finally:
        sender.stop()
        outbox.close()


def test_an_alert_left_undelivered_is_sent_by_the_next_process(
    tmp_path: Path, hook: FlakyWebhook
) -> None:
    path = tmp_path / "a.db"
    outbox = AlertOutbox(path)
    sinks = [(Webhook(hook.url).name, GENERIC)]
    outbox.offer(sinks, alerts_for(EVENT, {OUT: [failed(rule("b", "error"))]}))
    outbox.close()  # the producer stopped before delivering it
    hook.up.set()
    again = AlertOutbox(path)
    sender = AlertSender(again, [Webhook(hook.url)], retry_initial=0.05)
    sender.start()
    try:
        assert wait_until(lambda: len(hook.taken) == 1)
        assert wait_until(lambda: again.pending() == 0)
    finally:
        sender.stop()
        again.close()

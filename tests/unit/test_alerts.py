"""Alerts (issue 10.4): which results alert, the generic and Slack messages, the outbox's once per
(sink, run, dataset) across reopen, and delivery with back-off to a real local HTTP server that is
down, then up. Issue 27: Slack text escaped and within Slack's limits, alerts refused for good
dead-lettered."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flaky_webhook import FlakyWebhook
from lineage_quality.cli import main
from lineage_quality.engine import verdict
from lineage_quality.inert import TRUNCATED
from lineage_quality.kinds import RuleKind
from lineage_quality.producer.alert_outbox import AlertOutbox, outbox_path
from lineage_quality.producer.alert_sender import AlertSender, Webhook
from lineage_quality.producer.alerts import (
    GENERIC,
    SLACK,
    SLACK_TEXT_LIMIT,
    alerts_for,
    marquez_dataset_url,
    message_for,
    parse_min_severity,
    slack_message,
)
from lineage_quality.results import RuleResult, error_result
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.refs import DatasetRef

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


def test_an_alert_links_to_the_dataset_in_the_quality_view() -> None:
    """A deep link into the page (issue 53): the view's address given to serve (--view-url),
    the dataset key encoded whole; Slack shows it beside Marquez's."""
    found = alerts_for(EVENT, {OUT: [failed(rule("b", "error"))]}, 0, None, "https://q.example/")
    link = "https://q.example/datasets/file%3A%2Fdata%2Fout%20put"
    assert found[0].payload["view"] == link
    assert f"<{link}|open in the quality view>" in json.dumps(slack_message(found[0].payload))
    assert "view" not in alerts_for(EVENT, {OUT: [failed(rule("b", "error"))]})[0].payload


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


def slack_texts(message: dict[str, Any]) -> list[str]:
    """Every text Slack renders as mrkdwn: the notification line, sections, context elements."""
    texts = [message["text"]]
    for block in message["blocks"]:
        if block["type"] == "section":
            texts.append(block["text"]["text"])
        else:
            texts.extend(element["text"] for element in block["elements"])
    return texts


def test_slack_messages_make_event_controlled_text_inert() -> None:
    """Issue 27.5: mentions and links in a job or dataset name (or a rule's text) reach Slack as
    text, not as `@channel` or a disguised link; the generic webhook gets the raw values."""
    job = "<!channel> nightly & <!here>\n• *forged* PASSED"
    name = "<https://evil.example/login|Reset your password>"
    event = {**EVENT, "job": {"namespace": "ns", "name": job}}
    out = DatasetRef("outputs", 0, "file", name)
    (alert,) = alerts_for(
        event, {out: [failed(rule("<!subteam^S1>", "error"))]}, 0, "http://m:3000"
    )
    joined = "\n".join(slack_texts(slack_message(alert.payload)))
    for live in ("<!channel>", "<!here>", "<!subteam", "<https://evil.example", "\n• *forged*"):
        assert live not in joined
    assert "&lt;!channel&gt; nightly &amp; &lt;!here&gt;\\n• *forged* PASSED" in joined
    assert "&lt;https://evil.example/login|Reset your password&gt;" in joined
    # our own link to Marquez is still a link (its parts are URI-encoded: nothing to escape)
    assert "|open in Marquez>" in joined
    generic = json.loads(json.dumps(message_for(GENERIC, alert.payload)))
    assert generic["job"]["name"] == job and generic["dataset"]["name"] == name
    assert generic["failed"][0]["rule"] == "<!subteam^S1>"


def test_slack_blocks_stay_within_slacks_limits() -> None:
    """A 4,000-character dataset name and a hundred failed rules: every text stays within Slack's
    3,000 characters, cut with a visible marker and never inside an escape."""
    out = DatasetRef("outputs", 0, "file", "/" + "d&" * 2000)
    results = {out: [failed(rule(f"rule_{i}_" + "<" * 40, "error")) for i in range(100)]}
    message = slack_message(alerts_for(EVENT, results)[0].payload)
    texts = slack_texts(message)
    assert all(len(text) <= SLACK_TEXT_LIMIT for text in texts)
    assert len(message["blocks"]) <= 50
    title, rules = message["blocks"][0]["text"]["text"], message["blocks"][1]["text"]["text"]
    for text in (message["text"], title, rules):
        assert text.endswith(TRUNCATED)
        assert re.search(r"&[a-z]*$", text[: -len(TRUNCATED)]) is None  # no entity cut in half
    assert "&lt;&lt;" in rules and "<" not in rules


def test_an_alert_refused_for_good_goes_to_the_dead_letters_and_pending_drains(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 27.3: a 4xx other than 408/429 is retried `dead_letter_after` times with back-off,
    then moved aside like an event the sink refuses; `dead-letters --alerts` lists, retries and
    purges it."""
    hook = FlakyWebhook(down_status=400)
    spool = tmp_path / "spool.db"
    outbox = AlertOutbox(outbox_path(spool))
    sender = AlertSender(
        outbox, [Webhook(hook.url)], retry_initial=0.01, retry_max=0.02, dead_letter_after=3
    )
    alerts = alerts_for(EVENT, {OUT: [failed(rule("b", "error"))]})
    sender.start()
    try:
        outbox.offer(sender.sinks, alerts)
        assert wait_until(lambda: outbox.pending() == 0)
        time.sleep(0.2)
        assert hook.refused == 3  # never tried again
        (dead,) = outbox.dead_letters()
        assert dead.attempts == 3 and "HTTP 400" in dead.reason
        assert outbox.offer(sender.sinks, alerts) == 0  # still once per run and dataset
    finally:
        sender.stop()
        outbox.close()
        hook.close()

    assert main(["dead-letters", "list", "--alerts", "--spool", str(spool)]) == 0
    (line,) = capsys.readouterr().out.strip().splitlines()
    assert "HTTP 400" in line and "run-1" in line
    dead_id = line.split("\t")[0]
    assert main(["dead-letters", "show", dead_id, "--alerts", "--spool", str(spool)]) == 0
    assert json.loads(capsys.readouterr().out)["alert"]["runId"] == "run-1"
    assert main(["dead-letters", "retry", dead_id, "--alerts", "--spool", str(spool)]) == 0
    capsys.readouterr()
    again = AlertOutbox(outbox_path(spool))
    assert again.pending() == 1 and again.dead_letters() == []
    again.close()


@pytest.mark.parametrize("status", [408, 429, 500, 503])
def test_timeouts_throttling_and_server_errors_keep_retrying(tmp_path: Path, status: int) -> None:
    hook = FlakyWebhook(down_status=status)
    outbox = AlertOutbox(tmp_path / "a.db")
    sender = AlertSender(
        outbox, [Webhook(hook.url)], retry_initial=0.01, retry_max=0.02, dead_letter_after=2
    )
    sender.start()
    try:
        outbox.offer(sender.sinks, alerts_for(EVENT, {OUT: [failed(rule("b", "error"))]}))
        assert wait_until(lambda: hook.refused >= 5)
        assert outbox.pending() == 1 and outbox.dead_letters() == []
        hook.up.set()
        assert wait_until(lambda: outbox.pending() == 0)
        assert len(hook.taken) == 1
    finally:
        sender.stop()
        outbox.close()
        hook.close()

"""The stores issue 27.4 left without a bound of their own: the spool's event dead letters and the
alert outbox's undelivered alerts never grow past their settings (the oldest expire, counted and
logged), and the quarantine's rows per rule have one default, `Settings.quarantine_max_rows`."""

from __future__ import annotations

import base64
import hashlib
import inspect
import json
import logging
from pathlib import Path

import pytest

from lineage_quality.producer.alert_outbox import AlertOutbox
from lineage_quality.producer.alerts import GENERIC, Alert
from lineage_quality.producer.settings import DEFAULTS, Settings
from lineage_quality.producer.spool import Spool


def _event(n: int, pad: int = 0) -> str:
    return json.dumps(
        {"run": {"runId": f"run-{n}"}, "job": {"namespace": "n", "name": "j"}, "pad": "x" * pad}
    )


def test_event_dead_letters_never_grow_past_their_count_the_oldest_expire(tmp_path: Path) -> None:
    settings = Settings.of(spool_reserve_bytes=0, dead_letter_max_events=3)
    spool = Spool(tmp_path / "spool.db", settings)
    ids, expired = [], []
    for n in range(5):
        event_id = spool.put(_event(n), lane=f"run:run-{n}")
        ids.append(event_id)
        expired.append(spool.dead_letter(event_id, "refused 5 times: HTTP 400"))
        assert len(spool.dead_letters()) <= 3
    assert [d.id for d in spool.dead_letters()] == ids[2:]  # the oldest went first
    assert expired == [0, 0, 0, 1, 1]  # what each burial expired, for the metric and the log
    spool.close()
    again = Spool(tmp_path / "spool.db", settings)  # counted again on open
    event_id = again.put(_event(9), lane="run:run-9")
    assert again.dead_letter(event_id, "refused") == 1
    assert [d.id for d in again.dead_letters()] == [*ids[3:], event_id]
    again.close()


def test_event_dead_letters_never_grow_past_their_bytes(tmp_path: Path) -> None:
    size = len(_event(0, pad=1000).encode())
    settings = Settings.of(spool_reserve_bytes=0, dead_letter_max_bytes=2 * size + size // 2)
    spool = Spool(tmp_path / "spool.db", settings)
    for n in range(4):
        spool.dead_letter(spool.put(_event(n, pad=1000), lane=f"run:run-{n}"), "refused")
    letters = spool.dead_letters()
    assert sum(len(d.body.encode()) for d in letters) <= settings.spool.dead_letter_max_bytes
    assert [json.loads(d.body)["run"]["runId"] for d in letters] == ["run-2", "run-3"]
    # a dead letter put back and buried again is counted once
    new_id = spool.retry_dead_letter(letters[0].id)
    assert spool.dead_letter(new_id, "refused again") == 0
    assert spool.purge_dead_letters() == 2
    spool.close()


def test_bad_kafka_messages_are_bounded_records_that_never_expire_a_dead_letter(
    tmp_path: Path,
) -> None:
    """Issue 49.1: a Kafka message that is not an event is kept as its first bytes, size and
    SHA-256, its own count bound expiring only its own kind, whatever their sizes."""
    settings = Settings.of(
        spool_reserve_bytes=0, dead_letter_max_events=2, dead_letter_max_bytes=4096,
        kafka_bad_message_keep_bytes=16, kafka_bad_messages_max=2,
    )  # fmt: skip
    spool = Spool(tmp_path / "spool.db", settings)
    letter = spool.put(_event(0), lane="run:run-0")
    assert spool.dead_letter(letter, "refused") == 0
    huge = b"\xff" * 5_000_000  # 20 MB as \xNN text before
    text = ("a" + "é" * 100).encode()  # UTF-8, its head cut inside a character
    messages = [huge, None, text, huge]
    expired = [
        spool.keep_bad_message(m, "kafka:t/0", n, f"bad {n}") for n, m in enumerate(messages)
    ]
    assert expired == [0, 0, 1, 1]
    assert [d.id for d in spool.dead_letters()] == [letter]  # the dead letter stays
    bad = spool.bad_messages()
    assert [(b.offset, b.size, len(b.head)) for b in bad] == [(2, 201, 16), (3, 5_000_000, 16)]
    assert bad[1].sha256 == hashlib.sha256(huge).hexdigest()
    assert bad[0].shown()["head"] == "a" + "é" * 7 and "head" not in bad[1].shown()
    assert base64.b64decode(bad[1].shown()["headBase64"]) == b"\xff" * 16
    size = (tmp_path / "spool.db").stat().st_size + (tmp_path / "spool.db-wal").stat().st_size
    assert size < 256 * 1024, size
    spool.close()
    again = Spool(tmp_path / "spool.db", settings)  # counted again on open
    assert again.keep_bad_message(b"x", "kafka:t/1", 9, "bad") == 1
    assert again.purge_bad_messages([bad[1].id]) == 1 and len(again.bad_messages()) == 1
    assert again.purge_dead_letters() == 1 and again.purge_bad_messages() == 1
    again.close()


def _alert(n: int) -> Alert:
    return Alert(f"run-{n}", "file:/out", {"runId": f"run-{n}", "dataset": "file:/out"})


def test_undelivered_alerts_past_their_bound_expire_oldest_first_counted_and_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A long webhook outage during an alert flood: the outbox keeps the newest
    `alert_max_pending` undelivered alerts; each one expired is counted, the log says so once."""
    outbox = AlertOutbox(tmp_path / "a.db", max_pending=3)
    expired: list[int] = []
    outbox.on_expired = expired.append
    sinks = [("generic http://a", GENERIC)]
    with caplog.at_level(logging.WARNING, logger="lineage_quality"):
        for n in range(6):
            assert outbox.offer(sinks, [_alert(n)]) == 1
            assert outbox.pending() <= 3
    assert [r["run_id"] for r in outbox.rows()] == ["run-3", "run-4", "run-5"]
    assert sum(expired) == 3
    warned = [r for r in caplog.records if "expired" in r.getMessage()]
    assert len(warned) == 1 and "alert_max_pending" in warned[0].getMessage()
    (first, *_) = outbox.due()
    outbox.delivered(first.rowid)  # a delivered alert is not pending: room for one more
    assert outbox.offer(sinks, [_alert(6)]) == 1 and sum(expired) == 3
    outbox.close()


def test_the_producer_counts_expired_alerts_in_its_metrics(tmp_path: Path) -> None:
    from openlineage.client.transport.console import ConsoleConfig, ConsoleTransport

    from lineage_quality.producer import Evaluator, Forwarder, Producer
    from lineage_quality.producer.alert_sender import AlertSender, Webhook

    outbox = AlertOutbox(tmp_path / "a.db", max_pending=1)
    sender = AlertSender(outbox, [Webhook("http://127.0.0.1:9/hook")])
    spool = Spool(tmp_path / "spool.db", Settings.of(spool_reserve_bytes=0))
    producer = Producer(
        Evaluator([]), Forwarder(ConsoleTransport(ConsoleConfig())), spool, alerts=sender
    )
    for n in range(3):
        outbox.offer(sender.sinks, [_alert(n)])
    registry = producer.metrics.registry
    assert registry.get_sample_value("lineage_quality_alerts_expired_total") == 2
    assert registry.get_sample_value("lineage_quality_alerts_pending") == 1
    spool.close()
    outbox.close()


def test_the_outbox_and_the_dead_letters_take_their_bounds_from_the_settings() -> None:
    assert DEFAULTS.outputs.alert_max_pending == 10_000
    assert DEFAULTS.spool.dead_letter_max_events == 10_000
    assert DEFAULTS.spool.dead_letter_max_bytes == 256 * 1024 * 1024
    assert inspect.signature(AlertOutbox).parameters["max_pending"].default == (
        DEFAULTS.outputs.alert_max_pending
    )


def test_the_quarantines_rows_per_rule_have_one_default() -> None:
    from lineage_quality.cli import build_parser
    from lineage_quality.driver.attach import attach
    from lineage_quality.engine.quarantine import QuarantineConfig

    default = DEFAULTS.evaluation.quarantine_max_rows
    assert default == 1000
    assert QuarantineConfig("/q").max_rows == default
    args = build_parser().parse_args(["serve", "--contracts", "c.yaml"])
    assert args.quarantine_max_rows == default
    assert Settings().evaluation.quarantine_max_rows == default
    # attach(...) takes the setting's default (None: resolved when called, so that importing
    # lineage_quality does not import the producer)
    assert inspect.signature(attach).parameters["quarantine_max_rows"].default is None
    assert "quarantine_max_rows = Settings().evaluation.quarantine_max_rows" in inspect.getsource(
        attach
    )

"""Kafka out without a broker (tests/kafka has the real one): the message key is OpenLineage's,
the settings that would lose events are refused, a failure raises the right kind of error, and
SASL/SSL secrets never reach a log line or an error."""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from openlineage.client import event_v2
from openlineage.client.facet_v2 import parent_run
from openlineage.client.serde import Serde
from openlineage.client.transport.kafka import KafkaConfig, KafkaTransport
from openlineage.client.transport.transport import Transport

from lineage_quality.errors import ConfigError
from lineage_quality.producer.backoff import refused_for_good
from lineage_quality.producer.forward import Forwarder, RawEvent, transport_factory
from lineage_quality.producer.kafka import (
    KafkaAckedTransport,
    KafkaNotDelivered,
    KafkaRefused,
    message_key,
)
from lineage_quality.producer.kafka.keys import key_bytes
from lineage_quality.producer.kafka.transport import PRODUCER_ROLES, producer_settings
from lineage_quality.producer.poison import deterministic
from lineage_quality.producer.secrets import transport_secrets

RUN = "0190a1b2-0000-7000-8000-000000000001"


def _run_event(parent: dict[str, Any] | None = None) -> dict[str, Any]:
    facets = {"parent": parent} if parent is not None else {}
    return {
        "eventType": "START",
        "eventTime": "2026-01-01T00:00:00Z",
        "producer": "https://github.com/lineage-quality/tests/unit",
        "run": {"runId": RUN, "facets": facets},
        "job": {"namespace": "spark", "name": "etl.step"},
    }


def _parent(job: str, root: str | None = None) -> dict[str, Any]:
    facet: dict[str, Any] = {
        "run": {"runId": "0190a1b2-0000-7000-8000-000000000002"},
        "job": {"namespace": "airflow", "name": job},
    }
    if root is not None:
        facet["root"] = {
            "run": {"runId": "0190a1b2-0000-7000-8000-000000000003"},
            "job": {"namespace": "airflow", "name": root},
        }
    return facet


def test_a_run_is_keyed_by_the_top_of_its_chain_as_openlineage_keys_it() -> None:
    assert message_key(_run_event()) == "run:spark/etl.step"
    assert message_key(_run_event(_parent("dag.task"))) == "run:airflow/dag.task"
    assert message_key(_run_event(_parent("dag.task", root="dag"))) == "run:airflow/dag"
    # a parent facet naming no job leaves the event's own job
    assert message_key(_run_event({"run": {"runId": "x"}})) == "run:spark/etl.step"
    assert message_key({"dataset": {"namespace": "s3://b", "name": "t"}}) == "dataset:s3://b/t"
    assert message_key({"job": {"namespace": "n", "name": "j"}}) == "job:n/j"
    assert message_key({"eventType": "START"}) is None
    # every event of a run has the same key, whatever its type
    events = [_run_event(_parent("dag.task", root="dag")) for _ in range(3)]
    for event, kind in zip(events, ("START", "RUNNING", "COMPLETE"), strict=True):
        event["eventType"] = kind
    assert {message_key(e) for e in events} == {"run:airflow/dag"}


def test_the_key_is_the_one_openlineage_python_gives_the_same_event() -> None:
    """openlineage-python's KafkaTransport keys its event objects the way the Java client does;
    ours keys the received JSON alike (its objects are what it could not key: issue 43)."""
    job = event_v2.Job(namespace="spark", name="etl.step")
    run_id = "0190a1b2-0000-7000-8000-000000000001"
    parent = parent_run.ParentRunFacet(
        run=parent_run.Run(runId="0190a1b2-0000-7000-8000-000000000002"),
        job=parent_run.Job(namespace="airflow", name="dag.task"),
        root=parent_run.Root(
            run=parent_run.RootRun(runId="0190a1b2-0000-7000-8000-000000000003"),
            job=parent_run.RootJob(namespace="airflow", name="dag"),
        ),
    )
    theirs = KafkaTransport.__new__(KafkaTransport)  # only its key function, no producer
    for facets in ({}, {"parent": parent}):
        event = event_v2.RunEvent(
            eventType=event_v2.RunState.START,
            eventTime="2026-01-01T00:00:00Z",
            run=event_v2.Run(runId=run_id, facets=facets),
            job=job,
            producer="p",
        )
        ours = message_key(RawEvent(Serde.to_json(event)))
        assert ours == theirs._get_message_key(event)


def test_a_lone_surrogate_in_a_name_keeps_one_key() -> None:
    event = RawEvent('{"run": {"runId": "r"}, "job": {"namespace": "n", "name": "a\\ud800b"}}')
    assert key_bytes(message_key(event)) == b"run:n/a\\ud800b"


def test_settings_that_would_lose_events_or_wait_for_ever_are_refused() -> None:
    with pytest.raises(ConfigError, match="acks=0"):
        producer_settings({"acks": "0"})
    with pytest.raises(ConfigError, match=re.escape("request.required.acks=0")):
        producer_settings({"request.required.acks": 0})
    with pytest.raises(ConfigError, match=re.escape("delivery.report.only.error")):
        producer_settings({"delivery.report.only.error": "true"})
    with pytest.raises(ConfigError, match=re.escape("message.timeout.ms")):
        producer_settings({"message.timeout.ms": "0"})
    with pytest.raises(ConfigError, match=re.escape("message.timeout.ms")):
        producer_settings({"delivery.timeout.ms": "soon"})
    assert producer_settings({})["message.timeout.ms"] == 30_000
    assert producer_settings({"delivery.timeout.ms": "5000"}) == {
        "message.timeout.ms": "5000",
        "enable.idempotence": "true",  # acks=all: a run's events handed over without waiting
    }
    assert producer_settings({"enable.idempotence": "false"})["enable.idempotence"] == "false"
    kept = producer_settings({"acks": "1", "bootstrap.servers": "b:9092", "linger.ms": 0})
    assert kept == {  # acks=1: no idempotence (librdkafka would refuse it), each report awaited
        "acks": "1",
        "bootstrap.servers": "b:9092",
        "linger.ms": 0,
        "message.timeout.ms": 30_000,
    }


def test_a_refusal_counts_towards_the_dead_letters_an_outage_does_not() -> None:
    refused, missing = KafkaRefused("too large"), KafkaNotDelivered("timed out")
    assert refused_for_good(refused) and not refused_for_good(missing)
    assert not deterministic(refused) and not deterministic(missing)  # never buried at once


def _unreachable(tmp_path: Path, **config: Any) -> dict[str, Any]:
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return {
        "type": "kafka",
        "topic": "lineage",
        "config": {"bootstrap.servers": f"127.0.0.1:{port}", **config},
    }


def test_type_kafka_is_ours_and_an_unacknowledged_event_raises(tmp_path: Path) -> None:
    transport = transport_factory().create(
        _unreachable(tmp_path, **{"message.timeout.ms": "500", "sasl.password": "hunter2-pw"})
    )
    assert isinstance(transport, KafkaAckedTransport)
    assert transport.timeout == pytest.approx(5.5)
    forwarder = Forwarder(transport)
    started = time.monotonic()
    try:
        with pytest.raises(KafkaNotDelivered, match="_MSG_TIMED_OUT") as raised:
            forwarder.send(
                '{"eventType": "START", "run": {"runId": "r"}, '
                '"job": {"namespace": "n", "name": "j"}}'
            )
        assert time.monotonic() - started < 5  # librdkafka's report, not our margin
        assert "key 'run:n/j'" in str(raised.value)
        assert not isinstance(raised.value, KafkaRefused)
    finally:
        forwarder.close()
    with pytest.raises(KafkaNotDelivered, match="closed"):
        transport.emit(RawEvent('{"job": {"namespace": "n", "name": "j"}}'))


def test_stopping_ends_a_wait_for_the_broker_at_once(tmp_path: Path) -> None:
    """A send waiting for its report (a broker away, message.timeout.ms 60 s) ends when the
    producer stops (`Forwarder.interrupt`), not 65 s later; its event stays in the spool."""
    forwarder = Forwarder(
        transport_factory().create(_unreachable(tmp_path, **{"message.timeout.ms": "60000"}))
    )
    raised: list[BaseException] = []

    def send() -> None:
        try:
            forwarder.send('{"job": {"namespace": "n", "name": "j"}}')
        except Exception as exc:
            raised.append(exc)

    sending = threading.Thread(target=send)
    sending.start()
    time.sleep(0.5)
    started = time.monotonic()
    forwarder.interrupt()
    sending.join(timeout=5)
    assert not sending.is_alive() and time.monotonic() - started < 2
    assert len(raised) == 1 and isinstance(raised[0], KafkaNotDelivered)
    assert "stopped before the broker answered" in str(raised[0])
    assert forwarder.transport.close(0) is False  # its message was not acknowledged


def test_the_openlineage_configuration_of_kafka_makes_ours(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENLINEAGE_URL", raising=False)
    monkeypatch.delenv("OPENLINEAGE_DISABLED", raising=False)
    config = _unreachable(tmp_path)
    (tmp_path / "openlineage.yml").write_text(
        "transport:\n  type: kafka\n  topic: lineage\n  config:\n"
        f"    bootstrap.servers: '{config['config']['bootstrap.servers']}'\n"
        "    sasl.password: 'hunter2-pw'\n    ssl.key.password: 'k3y-pass'\n"
    )
    monkeypatch.setenv("OPENLINEAGE_CONFIG", str(tmp_path / "openlineage.yml"))
    forwarder = Forwarder()
    try:
        assert isinstance(forwarder.transport, KafkaAckedTransport)
        assert sorted(transport_secrets(forwarder.transport)) == ["hunter2-pw", "k3y-pass"]
    finally:
        forwarder.close()


def test_secrets_are_masked_in_the_errors_raised(tmp_path: Path) -> None:
    transport = KafkaAckedTransport(
        KafkaConfig.from_dict(_unreachable(tmp_path, **{"sasl.password": "hunter2-pw"}))
    )
    try:

        class Said:
            def name(self) -> str:
                return "_AUTHENTICATION"

            def str(self) -> str:
                return "SASL authentication error: password hunter2-pw refused"

        error = transport._failure(Said(), "run:n/j", alone=True)
        assert "hunter2-pw" not in str(error) and "***" in str(error)
        assert not isinstance(error, KafkaRefused)
    finally:
        transport.close()


def test_a_refusal_counts_for_good_only_for_a_message_sent_alone(tmp_path: Path) -> None:
    """The broker refuses a batch whole: an oversized message makes every message batched with
    it look refused. Only `emit`'s producer sends each message alone; a refusal elsewhere is
    retried (alone) before it counts towards the dead letter."""
    transport = KafkaAckedTransport(KafkaConfig.from_dict(_unreachable(tmp_path)))
    try:

        class TooLarge:
            def name(self) -> str:
                return "MSG_SIZE_TOO_LARGE"

            def str(self) -> str:
                return "Broker: Message size too large"

        alone = transport._failure(TooLarge(), "run:n/j", alone=True)
        batched = transport._failure(TooLarge(), "run:n/j", alone=False)
        assert refused_for_good(alone) and isinstance(alone, KafkaRefused)
        assert not refused_for_good(batched) and isinstance(batched, KafkaNotDelivered)
        assert "sent alone before it counts" in str(batched)
        settings = PRODUCER_ROLES
        assert settings["alone"] == {"batch.num.messages": "1"}
        assert settings["gapless"] == {"enable.gapless.guarantee": "true"}
    finally:
        transport.close()


def test_an_invalid_setting_is_a_start_up_error_without_its_secrets(tmp_path: Path) -> None:
    config = _unreachable(tmp_path, **{"sasl.password": "hunter2-pw", "no.such.setting": "1"})
    with pytest.raises(ConfigError, match=re.escape("no.such.setting")) as raised:
        transport_factory().create(config)
    assert "hunter2-pw" not in str(raised.value)


class _FlakyBroker(Transport):
    """A transport failing as the Kafka one does: `outages` deliveries not acknowledged
    (`KafkaNotDelivered`), then taken; an event holding "POISON" always refused
    (`KafkaRefused`, as a message over the topic's max.message.bytes)."""

    def __init__(self, outages: int) -> None:
        self.outages = outages
        self.taken: list[int] = []
        self.lock = threading.Lock()

    def emit(self, event: Any) -> None:
        if "POISON" in event.text:
            raise KafkaRefused("Kafka did not take the event: MSG_SIZE_TOO_LARGE")
        with self.lock:
            if self.outages:
                self.outages -= 1
                raise KafkaNotDelivered("Kafka did not take the event: _MSG_TIMED_OUT")
            self.taken.append(int(json.loads(event.text)["run"]["facets"]["seq"]["n"]))


def test_delivery_retries_an_outage_and_dead_letters_a_refusal(tmp_path: Path) -> None:
    """Through the producer's Delivery: unacknowledged events are retried until taken (never
    dead-lettered), a refused one is dead-lettered after `dead_letter_after` refusals, with the
    broker's reason, and its run goes on in order."""
    from lineage_quality.producer import Evaluator, Producer, Spool
    from lineage_quality.producer.backoff import Backoff
    from lineage_quality.producer.settings import Settings

    broker = _FlakyBroker(outages=4)
    producer = Producer(
        Evaluator([]),
        Forwarder(broker),
        Spool(tmp_path / "spool.db"),
        Settings.of(port=0, workers=2, dead_letter_after=3, retry=Backoff(0.01, 0.02)),
    )
    producer.start()
    try:
        host, port = producer.url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        for seq in range(5):
            event = _run_event()
            event["run"]["facets"]["seq"] = {
                "_producer": "https://github.com/lineage-quality/tests/unit",
                "_schemaURL": "https://github.com/lineage-quality/tests/unit/seq",
                "n": seq,
                "note": "POISON" if seq == 1 else "",
            }
            connection.request(
                "POST", "/api/v1/lineage", json.dumps(event), {"Content-Type": "application/json"}
            )
            response = connection.getresponse()
            response.read()
            assert response.status == 201
        connection.close()
        assert producer.spool.wait_empty(timeout=30)
    finally:
        producer.stop()
    assert broker.taken == [0, 2, 3, 4]
    dead = producer.spool.dead_letters()
    assert len(dead) == 1 and "refused 3 times" in dead[0].reason
    assert "MSG_SIZE_TOO_LARGE" in dead[0].reason
    assert producer.counters["dead_letters"] == 1
    assert producer.counters["forward_failures"] == 4 + 3
    assert producer.counters["forwarded"] == 4


def test_a_fatal_error_replaces_the_producer_once_its_messages_failures_are_reported(
    tmp_path: Path,
) -> None:
    """The relay's producer raises a fatal error from its poll (the gapless guarantee's): a new
    one is made, but takes nothing while the old one's messages are still to be reported failed
    (a later event of a run must not be written before an earlier one's failure is known)."""
    from confluent_kafka import KafkaError, KafkaException

    transport = KafkaAckedTransport(KafkaConfig.from_dict(_unreachable(tmp_path)))
    try:
        relay = transport.gapless()

        class Dying:
            def __init__(self) -> None:
                self.queued = 1  # a message whose failure is not reported yet
                self.raised = False

            def poll(self, timeout: float) -> int:
                if not self.raised:
                    self.raised = True
                    raise KafkaException(KafkaError(KafkaError._FATAL, "gap-less", fatal=True))
                time.sleep(min(timeout, 0.01))
                return 0

            def __len__(self) -> int:
                return self.queued

            def flush(self, timeout: float) -> int:
                return self.queued

        dying = Dying()
        transport._producers["gapless"] = dying  # type: ignore[assignment]
        deadline = time.monotonic() + 5
        while transport._producers["gapless"] is dying and time.monotonic() < deadline:
            time.sleep(0.01)
        assert transport._producers["gapless"] is not dying  # replaced
        with pytest.raises(KafkaNotDelivered, match="being replaced"):
            relay.produce(json.dumps(_run_event()), None, lambda error: None)
        dying.queued = 0  # its last failure reported
        deadline = time.monotonic() + 5
        while "gapless" in transport._replacing and time.monotonic() < deadline:
            time.sleep(0.01)
        relay.produce(json.dumps(_run_event()), None, lambda error: None)  # taken again
    finally:
        transport.close(0)

"""Kafka out against a real broker (kafka_broker.py: Apache Kafka, KRaft, one node): the producer
forwards through `type: kafka` (producer/kafka/transport.py) and an event leaves the spool only
once the broker acknowledged it.

(a) each message carries OpenLineage's run key, and each run's events are in one partition in
    the order they were received; counted exactly, byte for byte as received;
(b) the broker stopped for longer than librdkafka's message timeout while events flow, then
    started again: every event arrives (at least once), none lost, none dead-lettered, each run
    in order;
(c) an event larger than the topic's `max.message.bytes` is refused for good: dead-lettered with
    the broker's reason after `dead_letter_after` refusals, its run's other events go on.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from kafka_broker import KafkaBroker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
from faultkit import Sender, make_event, record_fault

from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.backoff import Backoff
from lineage_quality.producer.forward import transport_factory
from lineage_quality.producer.settings import Settings

pytestmark = pytest.mark.kafka
PARENT = {
    "_producer": "https://github.com/lineage-quality/tests/kafka",
    "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json",
    "run": {"runId": "0190a1b2-0000-7000-8000-00000000aaaa"},
    "job": {"namespace": "airflow", "name": "dag.task"},
}
ROOTED = {
    **PARENT,
    "root": {
        "run": {"runId": "0190a1b2-0000-7000-8000-00000000bbbb"},
        "job": {"namespace": "airflow", "name": "dag"},
    },
}


def _event(run: int, seq: int, last: int, pad: int = 0) -> dict[str, Any]:
    """Event `seq` of run `run` (START ... COMPLETE); runs 0-2 have a parent, 3-4 a root too."""
    kind = "START" if seq == 0 else "COMPLETE" if seq == last else "RUNNING"
    event = make_event(run, seq, kind, pad=pad)
    if run < 3:
        event["run"]["facets"]["parent"] = PARENT
    elif run < 5:
        event["run"]["facets"]["parent"] = ROOTED
    return event


def _expected_key(run: int) -> str:
    if run < 3:
        return "run:airflow/dag.task"  # the parent's job
    if run < 5:
        return "run:airflow/dag"  # the root's job
    return f"run:reliability/job_{run}"  # its own


def _producer(
    broker: KafkaBroker, topic: str, tmp_path: Path, settings: Settings, **config: Any
) -> Producer:
    """`serve`'s producer forwarding to `topic`, made from the OpenLineage config of `type: kafka`
    as `serve` makes it (forward.transport_factory)."""
    transport = transport_factory().create(
        {
            "type": "kafka",
            "topic": topic,
            "config": {"bootstrap.servers": broker.bootstrap, **config},
        }
    )
    return Producer(Evaluator([]), Forwarder(transport), Spool(tmp_path / "spool.db"), settings)


def _by_run(messages: list[Any]) -> dict[int, list[tuple[int, int, str | None, int]]]:
    """(partition, offset, key, seq) of each message, by run, in partition order."""
    runs: dict[int, list[tuple[int, int, str | None, int]]] = defaultdict(list)
    for partition, offset, key, value in sorted(messages, key=lambda m: (m[0], m[1])):
        event = json.loads(value)
        run = int(event["run"]["runId"].rsplit("-", 1)[1])
        runs[run].append((partition, offset, key, int(event["run"]["facets"]["seq"]["n"])))
    return runs


def _check_runs(runs: dict[int, list[tuple[int, int, str | None, int]]], per_run: int) -> int:
    """Each run: one partition, its own key, every event, first arrivals in order; returns the
    number of duplicates."""
    duplicates = 0
    for run, got in runs.items():
        assert {p for p, _, _, _ in got} == {got[0][0]}, f"run {run} over several partitions"
        assert {k for _, _, k, _ in got} == {_expected_key(run)}, got
        first: list[int] = []
        for _, _, _, seq in got:
            if seq not in first:
                first.append(seq)
        assert first == list(range(per_run)), f"run {run} out of order: {first}"
        duplicates += len(got) - per_run
    return duplicates


def test_events_arrive_with_the_run_key_in_order_within_their_partition(
    running_broker: KafkaBroker, tmp_path: Path
) -> None:
    runs, per_run, topic = 8, 6, "lineage-order"
    running_broker.create_topic(topic, partitions=3)
    producer = _producer(running_broker, topic, tmp_path, Settings.of(port=0, workers=4))
    producer.start()
    sender = Sender(producer.url)
    events = [_event(run, seq, per_run - 1) for seq in range(per_run) for run in range(runs)]
    try:
        accepted = sum(sender.post(e) == 201 for e in events)
        assert producer.spool.wait_empty(timeout=60)
    finally:
        sender.close()
        producer.stop()
    messages = running_broker.read(topic, len(events))
    by_run = _by_run(messages)
    assert sorted(by_run) == list(range(runs))
    assert _check_runs(by_run, per_run) == 0
    # the text as received, byte for byte (json.dumps is what Sender posted)
    assert sorted(m[3] for m in messages) == sorted(json.dumps(e) for e in events)
    # a parent's runs share its key, hence a partition
    assert len({by_run[r][0][0] for r in (0, 1, 2)}) == 1
    assert producer.counters["forwarded"] == len(events) == len(messages) == accepted
    assert producer.counters["forward_failures"] == 0
    record_fault(
        "kafka out: run keys and order", len(events), accepted, len(messages), duplicates=0
    )


def test_a_broker_down_past_the_message_timeout_loses_nothing(
    running_broker: KafkaBroker, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    runs, per_run, topic = 10, 10, "lineage-outage"
    running_broker.create_topic(topic, partitions=3)
    producer = _producer(
        running_broker,
        topic,
        tmp_path,
        Settings.of(port=0, workers=4, retry=Backoff(initial=0.2, maximum=1.0)),
        **{"message.timeout.ms": "2000", "reconnect.backoff.max.ms": "500"},
    )
    producer.start()
    events = [_event(run, seq, per_run - 1) for seq in range(per_run) for run in range(runs)]
    statuses: list[int] = []
    posted = threading.Event()

    def flow() -> None:  # events keep coming while the broker is away
        sender = Sender(producer.url)
        try:
            for event in events:
                statuses.append(sender.post(event))
                time.sleep(0.1)
        finally:
            sender.close()
            posted.set()

    threading.Thread(target=flow, daemon=True).start()
    try:
        assert producer.counters.wait_for("forwarded", 15, timeout=60)
        running_broker.stop()
        down = time.monotonic()
        # failures are reports of timed-out messages (2 s), not a quick refusal
        assert producer.counters.wait_for("forward_failures", 4, timeout=60)
        time.sleep(max(0.0, 5.0 - (time.monotonic() - down)))  # down > 2x message.timeout.ms
        forwarded_while_down = producer.counters["forwarded"]
        running_broker.start()
        assert posted.wait(timeout=120)
        assert producer.spool.wait_empty(timeout=180)
    finally:
        producer.stop()
    messages = running_broker.read(topic, len(events), timeout=120)
    by_run = _by_run(messages)
    accepted = statuses.count(201)
    distinct = {(run, seq) for run, got in by_run.items() for _, _, _, seq in got}
    assert accepted == len(events)
    assert len(distinct) == len(events)  # every one, at least once
    duplicates = _check_runs(by_run, per_run)
    assert producer.counters["dead_letters"] == 0 and producer.spool.dead_letters() == []
    failures = producer.counters["forward_failures"]
    assert failures >= 4
    # the failures were librdkafka's reports of messages it could not deliver in time, retried
    timed_out = [r for r in caplog.records if "_MSG_TIMED_OUT" in r.getMessage()]
    assert timed_out and all("retrying in" in r.getMessage() for r in timed_out)
    # ... among them events handed over without waiting: settled in order, retried from there
    assert any("in its run's order" in r.getMessage() for r in timed_out)
    record_fault(
        "kafka out: broker down past message.timeout.ms, then up",
        len(events),
        accepted,
        len(distinct),
        duplicates=duplicates,
        failed_attempts=failures,
        forwarded_before_restart=forwarded_while_down,
        messages=len(messages),
    )


def test_an_event_too_large_for_the_topic_is_dead_lettered_with_the_reason(
    running_broker: KafkaBroker, tmp_path: Path
) -> None:
    topic = "lineage-small"
    running_broker.create_topic(topic, partitions=1, config={"max.message.bytes": "4096"})
    producer = _producer(
        running_broker,
        topic,
        tmp_path,
        Settings.of(port=0, dead_letter_after=3, retry=Backoff(initial=0.05, maximum=0.1)),
    )
    producer.start()
    sender = Sender(producer.url)
    events = [_event(7, 0, 2), _event(7, 1, 2, pad=10_000), _event(7, 2, 2)]
    try:
        accepted = sum(sender.post(e) == 201 for e in events)
        assert producer.spool.wait_empty(timeout=60)
    finally:
        sender.close()
        producer.stop()
    messages = running_broker.read(topic, 2)
    assert [json.loads(m[3])["run"]["facets"]["seq"]["n"] for m in messages] == [0, 2]
    dead = producer.spool.dead_letters()
    assert len(dead) == 1, dead
    reason = dead[0].reason
    assert "refused 3 times" in reason and "MSG_SIZE_TOO_LARGE" in reason, reason
    assert producer.counters["dead_letters"] == 1
    # the first attempt went batched (the broker refuses a batch whole: not counted), then
    # three alone, refused for good
    assert producer.counters["forward_failures"] == 4
    record_fault(
        "kafka out: an event over the topic's max.message.bytes",
        len(events),
        accepted,
        len(messages) + len(dead),
        dead_lettered=len(dead),
    )

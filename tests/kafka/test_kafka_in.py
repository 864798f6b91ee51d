"""Kafka in with a real broker: `serve --kafka-bootstrap-servers` consumes the listener's topic
(events keyed by run, as the listener's Kafka transport writes them), spools, forwards.

- The spool bounded at 10 events and the sink holding every request: consumption pauses with the
  spool at its bound, and the offsets committed never pass what the spool holds (an offset is
  committed only once its event is in the spool); released, every event arrives, each run in
  order, and the group's offsets reach the end of the topic.
- Messages that are not events (not JSON, NaN, a lone surrogate's UTF-8 bytes, empty, no
  value) are kept as bad messages with their reason, their offsets committed: the partition goes
  on.
- SIGKILL with events in the spool: a restart on the same spool forwards them (their offsets were
  committed), the rest is read again from the last commit: nothing lost.
- SIGKILL while a burst is taken in batches (one spool commit each): what is committed is in the
  spool or forwarded, and the restart brings every event: nothing lost mid-batch.
- Topic -> serve -> topic through the spool (`--kafka-relay off`; the relay: test_kafka_relay.py),
  SIGKILL while an event of each of 40 runs is handed to Kafka out and not yet acknowledged: none
  had left the spool; the restart brings every event, each run in order.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import urllib.request
from pathlib import Path

import pytest
from kafka_broker import KafkaBroker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
from faultkit import (
    RecordingSink,
    ServeProcess,
    check_run_order,
    key_of,
    make_event,
    record_fault,
)
from kafkakit import committed, end_offsets, in_out_serve, kafka_serve, produce, wait_until

pytestmark = pytest.mark.kafka
PARTITIONS = 3


def _metrics(url: str) -> str:
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as answer:
        return str(answer.read().decode())


def _events(runs: int, per_run: int) -> list[dict]:
    return [make_event(run, seq) for seq in range(per_run) for run in range(runs)]


def test_consumption_pauses_at_the_spool_bound_and_commits_only_what_is_spooled(
    running_broker: KafkaBroker, tmp_path: Path
) -> None:
    topic, group, bound = "lineage-in-bound", "lq-bound", 10
    running_broker.create_topic(topic, partitions=PARTITIONS)
    events = _events(10, 5)
    bad: list[bytes | None] = [
        b"not json at all", b'{"eventType": "START", "x": NaN}', b"\xed\xa0\x80", b"", None,
    ]  # fmt: skip
    produce(running_broker, topic, events[:20] + bad + events[20:])
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    sink = RecordingSink()
    sink.hold()  # takes nothing: every event stays in the spool
    serve = kafka_serve(
        running_broker, topic, group, tmp_path, sink, contracts,
        ["--spool-max-events", str(bound), "--write-through-below", "0", "--workers", "2"],
    )  # fmt: skip
    try:
        assert wait_until(lambda: "paused consumption" in serve.log_path.read_text(), 60), (
            serve.log_path.read_text()[-3000:]
        )
        # while paused: what is committed is in the spool (or dead-lettered), nothing more
        for _ in range(3):
            wait_until(lambda: False, 1.0)  # a few commit periods pass
            done = sum(committed(running_broker, group, topic, PARTITIONS).values())
            assert done <= bound + len(bad), done
        assert sink.events == []
        assert "lineage_quality_kafka_paused 1.0" in _metrics(serve.url)
        sink.release()
        assert sink.wait_for(lambda s: len(s.received()) == len(events), 120), len(sink.events)
        end = end_offsets(running_broker, topic, PARTITIONS)
        assert wait_until(lambda: committed(running_broker, group, topic, PARTITIONS) == end, 30)
        metrics = _metrics(serve.url)
    finally:
        sink.release()
        serve.stop()
        sink.close()
    log = serve.log_path.read_text()
    assert log.count("Kafka in: paused consumption") >= 1
    assert "lineage_quality_kafka_paused 0.0" in metrics
    assert f'lineage_quality_kafka_messages_total{{outcome="taken"}} {len(events)}.0' in metrics
    assert f'lineage_quality_kafka_messages_total{{outcome="dead_lettered"}} {len(bad)}.0' in (
        metrics
    )
    check_run_order(sink.events)
    assert sink.received() == {key_of(e) for e in events}
    with sqlite3.connect(tmp_path / "serve.spool.db") as db:
        letters = db.execute("SELECT head, source, reason FROM bad_messages ORDER BY id").fetchall()
        assert db.execute("SELECT count(*) FROM dead_letters").fetchone() == (0,)
    assert len(letters) == len(bad)
    reasons = " | ".join(r for _, _, r in letters)
    assert "not JSON" in reasons and "NaN is not JSON" in reasons and "utf-8" in reasons
    assert "an empty message (no value)" in reasons
    assert all(source.startswith(f"kafka:{topic}/") for _, source, _ in letters)
    assert sorted(bytes(head) for head, _, _ in letters) == sorted(b or b"" for b in bad)
    record_fault(
        "kafka in: spool bound 10, sink held, then released",
        len(events) + len(bad), len(events), len(sink.received()),
        dead_letters=len(letters), duplicates=len(sink.events) - len(sink.received()),
    )  # fmt: skip


def test_sigkill_with_events_spooled_loses_nothing_after_restart(
    running_broker: KafkaBroker, tmp_path: Path
) -> None:
    topic, group = "lineage-in-kill", "lq-kill"
    running_broker.create_topic(topic, partitions=PARTITIONS)
    events = _events(8, 6)
    produce(running_broker, topic, events)
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    sink = RecordingSink()
    sink.hold(after=10)  # 10 forwarded, the rest kept in the spool
    args = ["--write-through-below", "0"]
    serve = kafka_serve(running_broker, topic, group, tmp_path, sink, contracts, args)
    try:
        assert sink.wait_for(lambda s: len(s.events) >= 10, 60)
        # every message consumed and spooled: its offset committed (commit every 0.5 s)
        end = end_offsets(running_broker, topic, PARTITIONS)
        assert wait_until(lambda: committed(running_broker, group, topic, PARTITIONS) == end, 60)
        serve.kill9()
        with sqlite3.connect(tmp_path / "serve.spool.db") as db:
            spooled = db.execute("SELECT count(*) FROM events").fetchone()[0]
        assert spooled >= len(events) - 10 - 2  # at most the held sends were in flight
        sink.release()
        again = kafka_serve(running_broker, topic, group, tmp_path, sink, contracts, args)
        try:
            assert sink.wait_for(lambda s: s.received() == {key_of(e) for e in events}, 120)
        finally:
            again.stop()
    finally:
        sink.release()
        if serve.proc.poll() is None:
            serve.stop()
        sink.close()
    check_run_order(sink.events)
    record_fault(
        "kafka in: kill -9 with events spooled, restart on the spool",
        len(events), len(events), len(sink.received()),
        spooled_at_kill=spooled, duplicates=len(sink.events) - len(sink.received()),
    )  # fmt: skip


def test_sigkill_while_a_burst_is_taken_in_batches_loses_nothing(
    running_broker: KafkaBroker, tmp_path: Path
) -> None:
    topic, group = "lineage-in-batches", "lq-batches"
    running_broker.create_topic(topic, partitions=PARTITIONS)
    events = _events(40, 10)  # 400 at once: librdkafka hands them over in batches
    produce(running_broker, topic, events)
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    sink = RecordingSink()
    sink.hold(after=5)  # the rest in the spool or not yet consumed at the kill
    args = ["--write-through-below", "0", "--kafka-commit-every", "0.05"]
    serve = kafka_serve(running_broker, topic, group, tmp_path, sink, contracts, args)
    try:
        assert sink.wait_for(lambda s: len(s.events) >= 5, 60)
        serve.kill9()
        done = sum(committed(running_broker, group, topic, PARTITIONS).values())
        with sqlite3.connect(tmp_path / "serve.spool.db") as db:
            spooled = db.execute("SELECT count(*) FROM events").fetchone()[0]
        # an offset is committed only once its event is kept: in the spool or forwarded
        assert done <= spooled + len(sink.events), (done, spooled, len(sink.events))
        assert spooled > 0, spooled  # kept before the kill, waiting for the sink
        sink.release()
        again = kafka_serve(running_broker, topic, group, tmp_path, sink, contracts, args)
        try:
            assert sink.wait_for(lambda s: s.received() == {key_of(e) for e in events}, 120)
            end = end_offsets(running_broker, topic, PARTITIONS)
            assert wait_until(
                lambda: committed(running_broker, group, topic, PARTITIONS) == end, 30
            )
        finally:
            again.stop()
    finally:
        sink.release()
        if serve.proc.poll() is None:
            serve.stop()
        sink.close()
    check_run_order(sink.events)
    record_fault(
        "kafka in: kill -9 while a burst is taken in batches, restart on the spool",
        len(events), len(events), len(sink.received()),
        spooled_at_kill=spooled, duplicates=len(sink.events) - len(sink.received()),
    )  # fmt: skip


def test_topic_in_serve_topic_out_keeps_each_run_in_order_through_a_kill_with_sends_in_flight(
    running_broker: KafkaBroker, tmp_path: Path
) -> None:
    """Kafka in and Kafka out together: the listener's topic -> serve -> another topic, keyed by
    its run, a run's events in one partition in order. Kafka out hands events over without
    waiting for each acknowledgement (a run's next once the one before it was acknowledged);
    with librdkafka holding them (linger.ms 3 s) serve is killed -9 while an event of each of
    the 40 runs is in flight: none had left the spool, and the restart on the same spool brings
    every event, byte for byte, each run's first arrivals in order."""
    topic_in, topic_out, group = "lineage-in-out", "lineage-out-of-serve", "lq-in-out"
    running_broker.create_topic(topic_in, partitions=PARTITIONS)
    running_broker.create_topic(topic_out, partitions=2)
    runs = 40
    events = _events(runs, 5)
    produce(running_broker, topic_in, events)
    contracts = tmp_path / "contracts"
    contracts.mkdir()

    def serve(linger_ms: int) -> ServeProcess:
        # every event through the spool (the relay's own test: test_kafka_relay.py)
        return in_out_serve(
            running_broker, tmp_path, (topic_in, topic_out), group, linger_ms,
            ["--kafka-relay", "off"],
        )  # fmt: skip

    first = serve(3000)  # messages wait 3 s in librdkafka before they go to the broker
    try:
        in_flight: list[float] = []

        def many_in_flight() -> bool:
            in_flight.append(_gauge(first.url, "lineage_quality_events_in_flight"))
            return in_flight[-1] >= runs  # one of each run: the next waits for it

        assert wait_until(many_in_flight, 60, step=0.05), in_flight
        first.kill9()
    finally:
        if first.proc.poll() is None:
            first.stop()
    delivered = sum(end_offsets(running_broker, topic_out, 2).values())
    with sqlite3.connect(tmp_path / "s.db") as db:
        spooled = db.execute("SELECT count(*) FROM events").fetchone()[0]
    # an event leaves the spool only once the broker acknowledged it
    assert spooled + delivered >= len(events), (spooled, delivered)
    again = serve(1)
    try:
        assert wait_until(
            lambda: _gauge(again.url, "lineage_quality_spool_events") == 0
            and _gauge(again.url, "lineage_quality_events_in_flight") == 0
            and committed(running_broker, group, topic_in, PARTITIONS)
            == end_offsets(running_broker, topic_in, PARTITIONS),
            90,
        )
        messages = running_broker.read(topic_out, len(events), timeout=30)
    finally:
        again.stop()
    assert {m[3] for m in messages} == {json.dumps(e) for e in events}  # each, as sent
    partitions: dict[str, set[int]] = {}
    for partition, _, key, _ in messages:
        partitions.setdefault(key, set()).add(partition)
    assert set(partitions) == {f"run:reliability/job_{run}" for run in range(runs)}
    assert all(len(p) == 1 for p in partitions.values())
    check_run_order([json.loads(m[3]) for m in sorted(messages, key=lambda m: (m[0], m[1]))])
    record_fault(
        "kafka in and out: kill -9 with sends in flight, restart on the spool",
        len(events), len(events), len({m[3] for m in messages}),
        in_flight_at_kill=max(in_flight), spooled_at_kill=spooled,
        duplicates=len(messages) - len(events),
    )  # fmt: skip


def _gauge(url: str, name: str) -> float:
    """The value of an unlabelled metric of serve's /metrics."""
    for line in _metrics(url).splitlines():
        if line.startswith(f"{name} "):
            return float(line.split()[1])
    raise AssertionError(f"no metric {name}")

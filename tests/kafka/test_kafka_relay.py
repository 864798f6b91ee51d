"""Kafka in relayed to Kafka out with a real broker (producer/kafka/relay.py): topic -> serve ->
topic, the events that need nothing but forwarding relayed from Kafka in's thread without the
spool, the others (a run that begins with a FAIL: remembered by a worker) spooled.

serve is killed -9 while one relayed event of each relayed run is held by librdkafka (linger 5 s)
and the spooled runs' first events are in flight from the spool: the offsets committed at the
kill pass only messages that are in the spool or on the output topic (the spooled runs' messages,
written first, committed; none past a relayed event not acknowledged), and the restart on the
same spool brings every event, byte for byte, each run's first arrivals in order."""

from __future__ import annotations

import json
import sqlite3
import sys
import urllib.request
from pathlib import Path

import pytest
from kafka_broker import KafkaBroker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
from faultkit import ServeProcess, check_run_order, make_event, record_fault
from kafkakit import committed, end_offsets, in_out_serve, produce, wait_until

pytestmark = pytest.mark.kafka
PARTITIONS = 3
RELAYED, SPOOLED, PER_RUN = 30, 10, 5


def _metric(url: str, name: str) -> float:
    """The value of an unlabelled metric of serve's /metrics."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    for line in text.splitlines():
        if line.startswith(f"{name} "):
            return float(line.split()[1])
    raise AssertionError(f"no metric {name}")


def test_relayed_events_survive_a_kill_with_their_offsets_never_past_what_is_kept(
    running_broker: KafkaBroker, tmp_path: Path
) -> None:
    topic_in, topic_out, group = "relay-in", "relay-out", "lq-relay"
    running_broker.create_topic(topic_in, partitions=PARTITIONS)
    running_broker.create_topic(topic_out, partitions=2)
    # the spooled runs first (a FAIL first: every event of the run goes through the spool), so
    # that each partition begins with messages the spool keeps at once
    spooled = [
        make_event(run, seq, "FAIL" if seq == 0 else "RUNNING")
        for seq in range(PER_RUN)
        for run in range(RELAYED, RELAYED + SPOOLED)
    ]
    relayed = [
        make_event(run, seq, "START" if seq == 0 else "COMPLETE" if seq == PER_RUN - 1
                   else "RUNNING")
        for seq in range(PER_RUN) for run in range(RELAYED)
    ]  # fmt: skip
    events = spooled + relayed
    produce(running_broker, topic_in, events)
    inputs = running_broker.read(topic_in, len(events), timeout=30)
    contracts = tmp_path / "contracts"
    contracts.mkdir()

    def serve(linger_ms: int) -> ServeProcess:
        return in_out_serve(
            running_broker, tmp_path, (topic_in, topic_out), group, linger_ms,
            ["--kafka-commit-every", "0.2"],
        )  # fmt: skip

    spooled_bodies = {json.dumps(e) for e in spooled}
    spooled_prefix = {
        p: sum(1 for m in inputs if m[0] == p and m[3] in spooled_bodies) for p in range(PARTITIONS)
    }
    first = serve(5000)  # librdkafka holds every message 5 s before it goes to the broker
    try:
        seen: list[tuple[float, dict[int, int]]] = []

        def relayed_out_and_spooled_committed() -> bool:
            out = _metric(first.url, "lineage_quality_events_in_flight")
            seen.append((out, committed(running_broker, group, topic_in, PARTITIONS)))
            # one relayed event of each relayed run out, one spooled of each spooled run
            return out >= RELAYED + SPOOLED and seen[-1][1] == spooled_prefix

        assert wait_until(relayed_out_and_spooled_committed, 60, step=0.1), seen[-3:]
        relayed_before_kill = _metric(first.url, "lineage_quality_events_relayed_total")
        first.kill9()
    finally:
        if first.proc.poll() is None:
            first.stop()
    at_kill = committed(running_broker, group, topic_in, PARTITIONS)
    delivered = {m[3] for m in running_broker.read(topic_out, 0, timeout=10)}
    with sqlite3.connect(tmp_path / "s.db") as db:
        in_spool = {body for (body,) in db.execute("SELECT body FROM events")}
    # every message below a committed offset is kept: in the spool or on the output topic
    for partition, offset, _, value in inputs:
        if offset < at_kill.get(partition, 0):
            assert value in in_spool or value in delivered, (partition, offset, at_kill)
    assert at_kill == spooled_prefix  # and no commit passed a relayed event not acknowledged
    assert relayed_before_kill == 0  # they were out, not acknowledged, at the kill
    again = serve(1)
    try:
        assert wait_until(
            lambda: (
                _metric(again.url, "lineage_quality_spool_events") == 0
                and _metric(again.url, "lineage_quality_events_in_flight") == 0
                and committed(running_broker, group, topic_in, PARTITIONS)
                == end_offsets(running_broker, topic_in, PARTITIONS)
            ),
            120,
        )
        relayed_after = _metric(again.url, "lineage_quality_events_relayed_total")
        messages = running_broker.read(topic_out, len(events), timeout=30)
    finally:
        again.stop()
    assert relayed_after >= RELAYED * PER_RUN  # the relayed runs went out without the spool
    assert {m[3] for m in messages} == {json.dumps(e) for e in events}  # each, as sent
    keys: dict[str, set[int]] = {}
    for partition, _, key, _ in messages:
        keys.setdefault(key, set()).add(partition)
    assert all(len(p) == 1 for p in keys.values())  # a run in one partition
    check_run_order([json.loads(m[3]) for m in sorted(messages, key=lambda m: (m[0], m[1]))])
    record_fault(
        "kafka relay: kill -9 with relayed events unacknowledged, restart",
        len(events), len(events), len({m[3] for m in messages}),
        committed_at_kill=sum(at_kill.values()), spooled_at_kill=len(in_spool),
        duplicates=len(messages) - len(events),
    )  # fmt: skip


def test_a_run_relayed_together_is_not_overtaken_past_an_event_the_topic_refuses(
    running_broker: KafkaBroker, tmp_path: Path
) -> None:
    """A run's events go out together (relay.py); the topic refuses the second one (over its
    max.message.bytes): none behind it reaches the topic before the refused one is given up
    (the relay's producer leaves no gap), it is dead-lettered with the broker's reason, and the
    run's others arrive in order; another run goes on."""
    topic_in, topic_out, group = "relay-gap-in", "relay-gap-out", "lq-relay-gap"
    running_broker.create_topic(topic_in, partitions=1)
    running_broker.create_topic(topic_out, partitions=1, config={"max.message.bytes": "4096"})
    runs, per_run, refused = (70, 71), 6, (70, 1)
    events = [
        make_event(run, seq, "START" if seq == 0 else "RUNNING",
                   pad=10_000 if (run, seq) == refused else 0)
        for run in runs for seq in range(per_run)
    ]  # fmt: skip
    produce(running_broker, topic_in, events)
    (tmp_path / "contracts").mkdir()
    # each message a batch of its own: the refused one and those behind it are in flight
    # apart, so that without the gapless producer the ones behind it would be written
    serve = in_out_serve(
        running_broker, tmp_path, (topic_in, topic_out), group, 0,
        ["--dead-letter-after", "2"], client={"batch.num.messages": "1"},
    )  # fmt: skip
    later = [make_event(72, seq, "START" if seq == 0 else "RUNNING") for seq in range(3)]
    try:
        running_broker.read(topic_out, len(events) - 1, timeout=90)
        assert wait_until(lambda: _metric(serve.url, "lineage_quality_spool_events") == 0, 60)
        before = _metric(serve.url, "lineage_quality_events_relayed_total")
        # the relay's producer stopped at the refusal (a fatal error): a new one relays on
        produce(running_broker, topic_in, later)
        running_broker.read(topic_out, len(events) - 1 + len(later), timeout=60)
        assert wait_until(
            lambda: _metric(serve.url, "lineage_quality_events_relayed_total") >= before + 3, 30
        )
    finally:
        serve.stop()
    messages = running_broker.read(topic_out, 0, timeout=10)
    arrived = [json.loads(m[3]) for m in messages]
    check_run_order(arrived)  # first arrivals in each run's order: nothing overtook seq 1
    seqs = {run: [e["run"]["facets"]["seq"]["n"] for e in arrived
                  if e["run"]["runId"].endswith(f"{run:012d}")] for run in runs}  # fmt: skip
    with sqlite3.connect(tmp_path / "s.db") as db:
        dead = [reason for (reason,) in db.execute("SELECT reason FROM dead_letters")]
    # each once, in order: nothing behind the refused one was written before its refusal was
    # known (then it would have been written again after it)
    assert seqs[70] == [0, 2, 3, 4, 5], (seqs, dead)
    assert sorted(set(seqs[71])) == list(range(6)), (seqs, dead)
    log = (tmp_path / "serve-0.log").read_text()
    assert "(gapless) hit a fatal error: starting a new one" in log
    assert len(dead) == 1 and "MSG_SIZE_TOO_LARGE" in dead[0], dead

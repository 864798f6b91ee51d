"""`serve` consuming Kafka stops within its bound after the broker went away (issue 49.6;
docs/operations.md, "Stopping"): the offsets it cannot commit are read again after the restart
(at least once), and neither the commit nor the consumer's close may hold the exit.

Last in the Kafka suite on purpose: it leaves the broker stopped, the suite's end stops it
anyway (a test after it that needs the broker starts it again: `running_broker`)."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import pytest
from kafka_broker import KafkaBroker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
from faultkit import RecordingSink, make_event
from kafkakit import committed, end_offsets, kafka_serve, produce, wait_until

from lineage_quality.producer.shutdown import STOP_GRACE_SECONDS

pytestmark = pytest.mark.kafka
DRAIN = 2.0


def test_serve_stops_within_its_bound_with_the_broker_gone(
    kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    if not kafka_broker.running:
        kafka_broker.stop()  # reap a process that died
        kafka_broker.start()
    topic, group = "lineage-in-stop", "lq-stop"
    kafka_broker.create_topic(topic, partitions=2)
    events = [make_event(run, seq) for seq in range(3) for run in range(4)]
    produce(kafka_broker, topic, events)
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    sink = RecordingSink()
    serve = kafka_serve(
        kafka_broker, topic, group, tmp_path, sink, contracts, ["--drain-seconds", str(DRAIN)]
    )
    try:
        assert sink.wait_for(lambda s: len(s.events) == len(events), 60)
        end = end_offsets(kafka_broker, topic, 2)
        assert wait_until(lambda: committed(kafka_broker, group, topic, 2) == end, 30)
        produce(kafka_broker, topic, [make_event(9, 0)])  # consumed: its offset not committed yet
        assert sink.wait_for(lambda s: len(s.events) == len(events) + 1, 30)
        kafka_broker.stop()  # the broker gone: no commit, no leaving the group
        started = time.monotonic()
        serve.proc.send_signal(signal.SIGTERM)
        code = serve.proc.wait(timeout=DRAIN + STOP_GRACE_SECONDS + 30)
        elapsed = time.monotonic() - started
    finally:
        serve.stop()
        sink.close()
    print(f"serve stopped in {elapsed:.1f}s with the broker gone, exit code {code}")
    assert code == 0, serve.log_path.read_text()[-3000:]
    assert elapsed < DRAIN + STOP_GRACE_SECONDS, serve.log_path.read_text()[-3000:]

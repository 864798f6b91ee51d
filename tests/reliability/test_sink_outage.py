"""The sink is down (connections refused), then comes up: nothing lost, each run in order."""

from __future__ import annotations

from pathlib import Path

from faultkit import (
    RecordingSink,
    Sender,
    check_run_order,
    http_transport,
    make_event,
    record_fault,
)

from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.backoff import Backoff
from lineage_quality.producer.settings import Settings

RUNS, PER_RUN = 5, 10


def test_sink_down_then_up_loses_nothing_and_keeps_run_order(tmp_path: Path) -> None:
    sink = RecordingSink(listening=False)
    producer = Producer(
        Evaluator([]),
        Forwarder(http_transport(sink)),
        Spool(tmp_path / "spool.db"),
        Settings.of(port=0, retry=Backoff(initial=0.05, maximum=0.2)),
    )
    producer.start()
    sender = Sender(producer.url)
    try:
        events = [make_event(run, seq) for seq in range(PER_RUN) for run in range(RUNS)]
        accepted = sum(sender.post(e) == 201 for e in events)
        # the sink refuses: the producer keeps retrying, every event stays in the spool
        assert producer.counters.wait_for("forward_failures", 10, timeout=30)
        assert producer.spool.pending() == len(events)
        assert sink.events == []

        sink.up()
        assert sink.wait_for(lambda s: len(s.received()) == len(events), timeout=60)
        assert producer.spool.wait_empty(timeout=30)
    finally:
        sender.close()
        producer.stop()
        sink.close()
    check_run_order(sink.events)
    lost = record_fault(
        "sink down, then up",
        sent=len(events),
        accepted=accepted,
        forwarded=len(sink.received()),
        duplicates=len(sink.events) - len(sink.received()),
        failed_attempts=producer.counters["forward_failures"],
    )
    assert accepted == len(events) and lost == 0

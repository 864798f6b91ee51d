"""A sink that stops answering: the spool fills up to its bound, warns at 80 %, then the receiver
answers 503 (the sender knows the event was not taken) instead of growing without limit. When
the sink recovers, everything accepted goes out, and resent events are taken again."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from faultkit import RecordingSink, Sender, http_transport, make_event, record_fault

from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.backoff import Backoff
from lineage_quality.producer.settings import Settings

BOUND = 20
EVENTS = 100


def test_stuck_sink_fills_the_spool_to_its_bound_then_503(
    tmp_path: Path, sink: RecordingSink, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="lineage_quality")
    sink.hold()  # takes nothing until released
    max_bytes = 64 * 1024
    producer = Producer(
        Evaluator([]),
        Forwarder(http_transport(sink)),
        Spool(
            tmp_path / "spool.db", Settings.of(spool_max_events=BOUND, spool_max_bytes=max_bytes)
        ),
        Settings.of(port=0, retry=Backoff(initial=0.05, maximum=0.2)),
    )
    producer.start()
    sender = Sender(producer.url)
    events = [make_event(run, seq, pad=500) for seq in range(10) for run in range(EVENTS // 10)]
    rejected: list[dict[str, object]] = []
    peak = (0, 0)
    try:
        for event in events:
            status, payload = sender.post_raw(json.dumps(event).encode(), sender.headers)
            if status == 503:
                assert "spool full" in json.loads(payload)["error"]
                rejected.append(event)
            else:
                assert status == 201
            count, size = producer.spool.usage()
            peak = (max(peak[0], count), max(peak[1], size))
        accepted = len(events) - len(rejected)
        assert accepted == BOUND
        assert peak[0] <= BOUND and peak[1] <= max_bytes
        assert "spool is 80% full" in caplog.text

        sink.release()
        assert sink.wait_for(lambda s: len(s.received()) == BOUND, timeout=60)
        # a sender that retries (the 503 said so) gets the rest in once there is room again
        for start in range(0, len(rejected), BOUND):
            assert producer.spool.wait_empty(timeout=60)
            assert all(sender.post(e) == 201 for e in rejected[start : start + BOUND])
        assert sink.wait_for(lambda s: len(s.received()) == len(events), timeout=60)
    finally:
        sender.close()
        producer.stop()
    lost = record_fault(
        "slow sink, spool bound 20",
        sent=len(events),
        accepted=accepted,
        forwarded=BOUND,
        rejected_503=len(rejected),
        resent_and_forwarded=len(sink.received()) - BOUND,
        peak_spool_events=peak[0],
        peak_spool_bytes=peak[1],
    )
    assert lost == 0

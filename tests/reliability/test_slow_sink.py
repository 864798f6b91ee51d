"""A sink slow to answer still gets one request per worker at once, each run's events in order.

One worker forwards alone while the sink answers within the spool's `helper_after` (more would
only contend for the GIL); a sink slower than that, and events already waiting in the spool,
bring the other workers in (`Spool._took`, `Spool._engaged`).
"""

from __future__ import annotations

from pathlib import Path

from faultkit import RecordingSink, Sender, check_run_order, http_transport, make_event

from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.backoff import Backoff
from lineage_quality.producer.settings import Settings

WORKERS = 4


def test_a_sink_that_holds_every_request_gets_one_per_worker(tmp_path: Path) -> None:
    sink = RecordingSink()
    sink.hold()  # every request waits, unanswered, until release()
    producer = Producer(
        Evaluator([]),
        Forwarder(http_transport(sink)),
        Spool(tmp_path / "spool.db"),
        Settings.of(port=0, workers=WORKERS, retry=Backoff(initial=0.05, maximum=0.2)),
    )
    producer.start()
    sender = Sender(producer.url)
    try:
        events = [make_event(run, seq) for seq in range(3) for run in range(WORKERS + 2)]
        assert all(sender.post(e) == 201 for e in events)
        # one run's event per worker in flight at once, none of a run behind its first
        assert sink.wait_for(lambda s: s.attempts == WORKERS, timeout=30)
        assert not sink.wait_for(lambda s: s.attempts > WORKERS, timeout=1.0)
        sink.release()
        assert sink.wait_for(lambda s: len(s.events) == len(events), timeout=30)
    finally:
        sender.close()
        producer.stop()
        sink.close()
    check_run_order(sink.events)
    assert {(e["run"]["runId"], e["run"]["facets"]["seq"]["n"]) for e in sink.events} == {
        (e["run"]["runId"], e["run"]["facets"]["seq"]["n"]) for e in events
    }

"""Write-through (producer/write_through.py): an event no rule binds goes to a fast sink before its
201, without the spool; a slow, stalled or refusing sink sends events through the spool as
before; a run's events keep their order either way, and nothing accepted is lost."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from faultkit import (
    CONTRACT,
    RecordingSink,
    Sender,
    check_run_order,
    http_transport,
    make_event,
    record_fault,
)

from lineage_quality.contracts import load_contracts
from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.backoff import Backoff
from lineage_quality.producer.settings import Settings


def _producer(tmp_path: Path, sink: RecordingSink, **settings: Any) -> Producer:
    producer = Producer(
        Evaluator([]),
        Forwarder(http_transport(sink)),
        Spool(tmp_path / "spool.db"),
        Settings.of(port=0, retry=Backoff(initial=0.05, maximum=0.2), **settings),
    )
    producer.start()
    return producer


@pytest.fixture
def fast(tmp_path: Path, sink: RecordingSink) -> Iterator[tuple[Producer, Sender]]:
    """A producer forwarding to `sink`, after one event that measured the sink as fast. Fast
    means within 1 s here: a loaded CI machine may take over 5 ms for a first send."""
    producer = _producer(tmp_path, sink, write_through_below=1.0)
    sender = Sender(producer.url)
    try:
        assert sender.post(make_event(999, 0, "START")) == 201
        assert sink.wait_for(lambda s: len(s.events) == 1, timeout=10)
        assert producer.spool.wait_empty(10)
        yield producer, sender
    finally:
        sender.close()
        producer.stop()


def _stored_rows(spool: Spool) -> int:
    """Events ever inserted into the spool's database (its AUTOINCREMENT high-water mark)."""
    row = spool.store.db.execute("SELECT max(id) FROM events").fetchone()
    seq = spool.store.db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
    return int((seq or row or (0,))[0] or 0)


def test_an_event_no_rule_binds_reaches_the_sink_before_its_201_without_the_spool(
    fast: tuple[Producer, Sender], sink: RecordingSink
) -> None:
    producer, sender = fast
    before = _stored_rows(producer.spool)
    events = [make_event(1, seq, kind) for seq, kind in enumerate(["START", "RUNNING", "COMPLETE"])]
    for n, event in enumerate(events, start=2):
        assert sender.post(event) == 201
        assert len(sink.events) == n  # at the sink when the 201 came back, not after
    assert _stored_rows(producer.spool) == before  # no row written for them
    assert producer.write_through.sent == 3
    assert producer.counters["forwarded"] == 4
    scrape = producer.metrics.exposition()[0].decode()
    assert "lineage_quality_events_written_through_total 3.0" in scrape
    assert "lineage_quality_events_received_total 4.0" in scrape
    record_fault("write-through (fast sink)", 3, 3, len(sink.events) - 1, written_through=3)


def test_the_runs_api_knows_a_run_written_through(
    fast: tuple[Producer, Sender], sink: RecordingSink
) -> None:
    producer, sender = fast
    assert sender.post(make_event(7, 0, "START")) == 201
    assert producer.write_through.sent == 1
    run_id = make_event(7, 0)["run"]["runId"]
    deadline = time.monotonic() + 5
    status = 0
    while time.monotonic() < deadline:  # recorded with the next commit (within 100 ms)
        conn = http.client.HTTPConnection("127.0.0.1", int(producer.url.rsplit(":", 1)[1]))
        conn.request("GET", f"/api/v1/runs/{run_id}")
        response = conn.getresponse()
        status, payload = response.status, json.loads(response.read())
        conn.close()
        if status == 200:
            break
        time.sleep(0.02)
    assert status == 200, payload
    assert payload["status"] == "evaluated" and payload["verdicts"] == []


def test_a_slow_sink_gets_events_through_the_spool_until_it_is_fast_again(
    tmp_path: Path, sink: RecordingSink
) -> None:
    sink.delay = 0.1  # over the write-through bound, which a loaded machine stays under
    producer = _producer(tmp_path, sink, write_through_below=0.04)
    sender = Sender(producer.url)
    try:
        started = time.monotonic()
        for seq in range(10):
            assert sender.post(make_event(1, seq)) == 201
        answered = time.monotonic() - started
        assert sink.wait_for(lambda s: len(s.events) == 10, timeout=30)
        assert producer.write_through.sent == 0
        # the 201s came from the spool, not after 10 sends of 100 ms each
        assert answered < 0.8, answered
        sink.delay = 0.0
        # measured fast again by the workers' sends of what the slow sink left in the spool: on
        # a loaded machine the posts can outrun them, so post (paced) until one is written
        # through, within a bound
        seq, deadline = 10, time.monotonic() + 20
        while producer.write_through.sent == 0 and seq < 200 and time.monotonic() < deadline:
            assert sender.post(make_event(1, seq)) == 201
            seq += 1
            time.sleep(0.02)
        assert producer.write_through.sent > 0, f"none written through after {seq - 10} posts"
        assert sink.wait_for(lambda s: len(s.events) == seq, timeout=30)
    finally:
        sender.close()
        producer.stop()
    check_run_order(sink.events)
    record_fault("slow sink, then fast (write-through)", seq, seq, len(sink.events))


@pytest.mark.parametrize("next_type", ["RUNNING", "FAIL"])
def test_a_run_keeps_its_order_when_its_written_through_event_is_refused(
    fast: tuple[Producer, Sender], sink: RecordingSink, next_type: str
) -> None:
    """Event 0 of a run is written through and the sink answers 503 after 0.3 s; event 1 of the
    same run arrives meanwhile on another connection: a RUNNING (which could be written through
    itself) or a FAIL (which never is). Event 1 waits for event 0's outcome: both go to the
    spool, 0 first, and reach the sink in order."""
    producer, _ = fast
    refused: list[int] = []
    written = producer.write_through.sent

    def refuse_first(event: dict[str, Any]) -> int | None:
        if event["run"]["runId"].endswith("000000000003") and not refused:
            refused.append(1)
            time.sleep(0.3)
            return 503
        return None

    sink.refuse = refuse_first
    statuses: list[int] = []
    first = threading.Thread(target=lambda: statuses.append(Sender(producer.url).post(
        make_event(3, 0, "START"))))  # fmt: skip
    first.start()
    deadline = time.monotonic() + 10
    while not refused and time.monotonic() < deadline:  # event 0 at the sink, unanswered
        time.sleep(0.01)  # (a fixed pause raced a loaded machine: the 2nd event came first)
    assert refused == [1]
    second = Sender(producer.url)
    try:
        assert second.post(make_event(3, 1, next_type)) == 201
    finally:
        second.close()
    first.join(10)
    assert statuses == [201]
    assert sink.wait_for(
        lambda s: {1, 0} <= {e["run"]["facets"]["seq"]["n"] for e in s.events[1:]}, timeout=10
    )
    assert refused == [1]
    assert producer.write_through.sent == written  # neither was written through
    check_run_order(sink.events)
    record_fault(
        f"write-through refused (503), a {next_type} of the run behind it",
        2,
        2,
        len(sink.events) - 1,
    )


def test_a_fail_and_a_bound_complete_are_never_written_through(
    tmp_path: Path, sink: RecordingSink
) -> None:
    """A FAIL is for the worker to remember and a COMPLETE that a contract binds is for it to
    evaluate: both go to the spool, even to a sink measured fast, while a RUNNING of the same
    run is written through. (Only the receiver runs here: no worker, so no Spark.)"""
    contract = tmp_path / "bound.odcs.yaml"
    contract.write_text(CONTRACT.format(key="bound", path=tmp_path / "bound"))
    evaluator = Evaluator(load_contracts([contract]))
    bound = make_event(5, 2, "COMPLETE", outputs=[
        {"namespace": "file", "name": str(tmp_path / "bound")}])  # fmt: skip
    assert evaluator.bound(bound), "the contract must bind the COMPLETE's output"
    producer = Producer(
        evaluator,
        Forwarder(http_transport(sink)),
        Spool(tmp_path / "spool.db"),
        Settings.of(port=0, warm_evaluator=False),
    )
    producer.forwarder.latency.took(0.001)  # the sink answered fast (no worker to measure it)
    producer.receiver.start()
    sender = Sender(producer.url)
    try:
        assert sender.post(make_event(5, 0, "RUNNING")) == 201
        assert producer.write_through.sent == 1 and len(sink.events) == 1
        assert sender.post(make_event(5, 1, "FAIL")) == 201
        assert sender.post(bound) == 201
        assert producer.write_through.sent == 1
        assert producer.spool.pending() == 2
        assert len(sink.events) == 1
    finally:
        sender.close()
        producer.receiver.stop()
        producer.forwarder.close()
        producer.spool.close()


def test_a_sink_that_stalls_mid_stream_costs_one_timeout_then_the_spool_takes_over(
    tmp_path: Path, sink: RecordingSink
) -> None:
    producer = _producer(tmp_path, sink, write_through_timeout=0.3, write_through_below=1.0)
    sender = Sender(producer.url)
    try:
        assert sender.post(make_event(1, 0)) == 201
        assert sink.wait_for(lambda s: len(s.events) == 1, timeout=10)
        assert producer.spool.wait_empty(10)
        assert sender.post(make_event(1, 1)) == 201
        assert producer.write_through.sent == 1
        sink.hold()  # every request waits, unanswered
        latencies = []
        for seq in range(2, 12):
            started = time.monotonic()
            assert sender.post(make_event(1, seq)) == 201
            latencies.append(time.monotonic() - started)
        # the first waited for its write-through to time out, the others went to the spool
        assert 0.25 < latencies[0] < 2.0, latencies
        assert max(latencies[1:]) < 0.25, latencies
        sink.release()
        assert sink.wait_for(lambda s: len({key[1] for key in s.received()}) == 12, timeout=30)
    finally:
        sender.close()
        producer.stop()
    check_run_order(sink.events)
    record_fault(
        "sink stalls mid-stream (write-through)",
        12,
        12,
        len(sink.received()),
        duplicates=len(sink.events) - len(sink.received()),
    )

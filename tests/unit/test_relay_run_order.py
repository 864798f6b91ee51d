"""Kafka in relayed to Kafka out without the spool (producer/kafka/relay.py), with a real spool and
a sink that answers when the test says: what needs nothing but forwarding is relayed and its
offset kept only once acknowledged; a run's events go out together, one that needs a worker
waiting until those before it were acknowledged, then spooled with the rest in order; a failed
delivery is spooled before the run's later events, once each was answered (a refusal for good
counted, one written meanwhile written again after it); a lane the spool has keeps its events
there; no worker takes a lane while one of its events is out; the stop leaves what was not
acknowledged to be read again."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lineage_quality import rawjson
from lineage_quality.producer.backoff import RefusedForGood
from lineage_quality.producer.envelope import Envelope
from lineage_quality.producer.intake import Intake
from lineage_quality.producer.kafka.keys import message_key
from lineage_quality.producer.kafka.offsets import Offsets
from lineage_quality.producer.kafka.relay import LINEAGE_THREADS, NotKept, Relay, Taken
from lineage_quality.producer.kafka.skeleton import read_facts
from lineage_quality.producer.metrics import Metrics
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.spool import Spool, SpoolFullError
from lineage_quality.producer.write_through import SinkLatency, WriteThrough

P = ("in", 0)
Told = Callable[[Exception | None], None]


class Sink:
    """Kafka out that answers when told: `answer(i, error)` for the i-th event produced."""

    pipelined = True

    def __init__(self) -> None:
        self.produced: list[tuple[str, Callable[[Exception | None], None]]] = []

    def produce(self, text: str, key: str | None, told: Told) -> None:
        assert key == message_key(json.loads(text))  # the relay's key is the event's own
        self.produced.append((text, told))

    def answer(self, i: int, error: Exception | None = None) -> None:
        self.produced[i][1](error)

    def seqs(self) -> list[int]:
        return [_seq(text) for text, _ in self.produced]


class Binder:
    """Binds every COMPLETE whose job is "bound"."""

    def bound(self, event: Any) -> Any:
        return ["rule"] if event["job"]["name"] == "bound" else []


def _body(run: int, seq: int, event_type: str = "RUNNING", job: str = "j") -> str:
    return rawjson.dumps({
        "eventType": event_type, "eventTime": "2026-12-06T00:00:00Z", "producer": "t",
        "run": {"runId": f"00000000-0000-4000-8000-{run:012d}", "facets": {"seq": {"n": seq}}},
        "job": {"namespace": "n", "name": job},
    })  # fmt: skip


def _seq(text: str) -> int:
    return int(rawjson.loads_plain(text)["run"]["facets"]["seq"]["n"])


@pytest.fixture
def parts(tmp_path: Path) -> tuple[Relay, Sink, Spool, Offsets, Metrics, list[str]]:
    spool = Spool(tmp_path / "spool.db", Settings.of(spool_max_events=5))
    counted: list[str] = []
    metrics = Metrics()
    intake = Intake(spool, Binder(), WriteThrough(None, SinkLatency(1.0), None, 1.0), metrics,
                    counted.append)  # fmt: skip
    sink = Sink()
    offsets = Offsets()
    yield Relay(sink, intake, offsets, limit=4), sink, spool, offsets, metrics, counted
    spool.close()


def _take(relay: Relay, offsets: Offsets, *items: tuple[int, str]) -> None:
    taken = []
    for offset, body in items:
        offsets.fetched(P, offset)
        read = read_facts(body.encode())  # as Kafka in reads them: the skeleton's facts
        assert read is not None
        taken.append(Taken(P, offset, Envelope.of_facts(*read), relay.epoch(P)))
    relay.take(taken)


def _spooled(spool: Spool) -> list[int]:
    with sqlite3.connect(spool.path) as db:
        return [_seq(b) for (b,) in db.execute("SELECT body FROM events ORDER BY id")]


def test_an_event_needing_nothing_is_relayed_and_its_offset_kept_once_acknowledged(
    parts: Any,
) -> None:
    relay, sink, spool, offsets, metrics, counted = parts
    _take(relay, offsets, (0, _body(1, 0, "START")), (1, _body(2, 0, "COMPLETE")))
    assert sink.seqs() == [0, 0] and spool.pending() == 0  # no spool row, no sync
    assert offsets.committable(P) == 0 and relay.out == 2
    sink.answer(1)
    relay.pump()
    assert offsets.committable(P) == 0  # offset 0 still out: the commit stops before it
    sink.answer(0)
    relay.pump()
    assert offsets.committable(P) == 2 and relay.out == 0
    assert counted == ["forwarded", "forwarded"]
    assert metrics.events_relayed._value.get() == 2


def test_a_runs_events_go_out_together_one_needing_a_worker_spooled_after_their_acks(
    parts: Any,
) -> None:
    relay, sink, spool, offsets, _, _ = parts
    _take(relay, offsets, (0, _body(1, 0, "START")), (1, _body(1, 1)),
          (2, _body(1, 2, "COMPLETE", job="bound")), (3, _body(1, 3)))  # fmt: skip
    assert sink.seqs() == [0, 1] and spool.pending() == 0  # the bound COMPLETE waits
    assert spool.claim(timeout=0) is None
    sink.answer(1)
    relay.pump()
    assert spool.pending() == 0  # the START is not acknowledged yet: nothing spooled
    sink.answer(0)
    relay.pump()
    # the COMPLETE needs its evaluation: it and everything after it go to the spool, in order
    assert sink.seqs() == [0, 1] and _spooled(spool) == [2, 3]
    assert offsets.committable(P) == 4
    claimed = spool.claim(timeout=1)  # the lane is the spool's again: a worker takes it
    assert claimed is not None and _seq(claimed.body) == 2
    spool.release(claimed.lane)
    _take(relay, offsets, (4, _body(1, 4)))  # its run is in the spool: behind it, there
    assert sink.seqs() == [0, 1] and _spooled(spool) == [2, 3, 4]


def test_a_failed_delivery_is_spooled_before_its_runs_later_events(parts: Any) -> None:
    relay, sink, spool, offsets, metrics, counted = parts
    _take(relay, offsets, (0, _body(1, 0, "START")), (1, _body(1, 1)), (2, _body(1, 2)),
          (3, _body(2, 0, "START")))  # fmt: skip
    assert sink.seqs() == [0, 1, 2, 0]
    sink.answer(0, RefusedForGood("MSG_SIZE_TOO_LARGE"))
    relay.pump()
    assert spool.pending() == 0  # run 1's events behind it are answered first
    sink.answer(1, RuntimeError("a fatal error: the gapless guarantee"))
    relay.pump()
    assert spool.pending() == 0
    _take(relay, offsets, (4, _body(1, 3)))  # waits behind the ones out, whatever it needs
    sink.answer(2)  # written all the same (a gap librdkafka does not cover): written again
    relay.pump()
    assert _spooled(spool) == [0, 1, 2, 3] and sink.seqs() == [0, 1, 2, 0]
    assert offsets.committable(P) == 3  # run 2's START is still out
    assert counted == ["forward_failures", "forward_failures", "forwarded"]
    first = spool.claim(timeout=1)
    assert first is not None and _seq(first.body) == 0 and first.refused == 1
    spool.done(first.id)
    spool.release(first.lane)
    second = spool.claim(timeout=1)
    assert second is not None and _seq(second.body) == 1 and second.refused == 0
    spool.release(second.lane)
    sink.answer(3)
    relay.pump()
    assert offsets.committable(P) == 5
    assert metrics.events_received._value.get() == 5  # seq 2, written then spooled: once


def test_a_spool_full_at_the_failure_keeps_the_run_waiting_and_tries_again(
    parts: Any,
) -> None:
    relay, sink, spool, offsets, _, _ = parts
    for n in range(5):  # the spool at its bound (5 events), by another run
        spool.put(_body(9, n), lane="run:other")
    _take(relay, offsets, (0, _body(1, 0, "START")), (1, _body(1, 1)))
    sink.answer(0, RuntimeError("broker down"))
    sink.answer(1, RuntimeError("broker down"))
    relay.pump()
    assert offsets.committable(P) == 0 and relay.poll_timeout(0.2) < 0.2
    with pytest.raises(NotKept) as refused:  # another run's event needing the spool
        _take(relay, offsets, (2, _body(3, 0, "FAIL")))
    assert isinstance(refused.value.__cause__, SpoolFullError)
    for _ in range(5):
        item = spool.claim(timeout=1)
        assert item is not None
        spool.done(item.id)
        spool.release(item.lane)
    relay.pump()
    assert _spooled(spool) == [0, 1] and offsets.committable(P) == 2  # 2 was never kept


def test_a_lane_the_spool_has_stays_there_and_the_bound_stops_fetching(parts: Any) -> None:
    relay, sink, spool, offsets, _, _ = parts
    spool.put(_body(1, 0), lane=Envelope.read(_body(1, 0)).lane)
    _take(relay, offsets, (0, _body(1, 1)), (1, _body(4, 0, "FAIL")), (2, _body(4, 1)))
    assert sink.seqs() == [] and _spooled(spool) == [0, 1, 0, 1]  # a FAIL is remembered first
    assert offsets.committable(P) == 3
    for run in range(10, 13):
        _take(relay, offsets, (run, _body(run, 0, "START")))
    assert not relay.full()
    _take(relay, offsets, (13, _body(13, 0, "START")), (14, _body(13, 1)))
    assert relay.full() and len(sink.produced) == 5  # past the bound, 4: no more fetched
    sink.answer(0)
    relay.pump()
    assert relay.full()
    sink.answer(3)
    relay.pump()
    assert not relay.full()
    assert spool.pending() == 4 and offsets.committable(P) == 11  # 11 and 12 still out


def test_the_stop_leaves_what_was_not_acknowledged_pending_and_frees_the_lanes(
    parts: Any,
) -> None:
    relay, sink, spool, offsets, _, _ = parts
    _take(relay, offsets, (0, _body(1, 0, "START")), (1, _body(1, 1)), (2, _body(2, 0)))
    sink.answer(2)  # run 2's
    relay.finish(0.05)
    assert offsets.committable(P) == 0  # run 1's events are read again after the restart
    assert len(sink.produced) == 3  # nothing more relayed while stopping
    lane = Envelope.read(_body(1, 1)).lane or ""
    assert spool.begin_direct(lane)  # the lane is nobody's
    spool.end_direct(lane)


def test_a_revoked_partitions_waiting_events_are_dropped_and_its_reports_ignored(
    parts: Any,
) -> None:
    relay, sink, spool, offsets, _, _ = parts
    _take(relay, offsets, (0, _body(1, 0, "START")), (1, _body(1, 1)))
    offsets.forget({P})
    relay.forget({P})
    sink.answer(0, RuntimeError("timed out"))
    sink.answer(1, RuntimeError("timed out"))
    relay.pump()
    assert spool.pending() == 0 and offsets.committable(P) is None  # the next owner's
    assert relay.out == 0 and not relay.full()


def _complete_writing(run: int, seq: int, output: str) -> str:
    return rawjson.dumps({
        "eventType": "COMPLETE", "eventTime": "2026-12-06T00:00:00Z", "producer": "t",
        "run": {"runId": f"00000000-0000-4000-8000-{run:012d}", "facets": {"seq": {"n": seq}}},
        "job": {"namespace": "n", "name": "j"},
        "outputs": [{"namespace": "file", "name": output}],
    })  # fmt: skip


@pytest.fixture
def kept_lineage(
    tmp_path: Path,
) -> tuple[Relay, Sink, Spool, Offsets, list[tuple[int, int]], list[str]]:
    """A relay whose intake keeps lineage: the step records (its call's seq, the events produced
    by then) and says an output named "marked" is marked; one named "broken" raises."""
    spool = Spool(tmp_path / "spool.db", Settings.of(spool_max_events=10))
    counted: list[str] = []
    calls: list[tuple[int, int]] = []
    sink = Sink()

    def step(tree: Any) -> bool:
        calls.append((_seq(rawjson.dumps(tree)), len(sink.produced)))
        name = tree["outputs"][0]["name"]
        if name == "broken":
            raise OSError("disk gone")
        return bool(name == "marked")

    intake = Intake(spool, Binder(), WriteThrough(None, SinkLatency(1.0), None, 1.0), Metrics(),
                    counted.append, lineage=step)  # fmt: skip
    offsets = Offsets()
    yield Relay(sink, intake, offsets, limit=8), sink, spool, offsets, calls, counted
    spool.close()


def _settle(relay: Relay, done: Callable[[], bool]) -> None:
    """Pump the relay's reports until `done()` (the lineage thread works beside the test)."""
    for _ in range(200):
        relay.pump()
        if done():
            return
        relay.wait(0.01)
    raise AssertionError("the relay did not settle")


def test_a_complete_is_relayed_once_its_lineage_is_kept_after_its_runs_earlier_events(
    kept_lineage: Any,
) -> None:
    relay, sink, spool, offsets, calls, counted = kept_lineage
    _take(relay, offsets, (0, _body(1, 0, "START")), (1, _complete_writing(1, 1, "t")),
          (2, _body(1, 2)))  # fmt: skip
    _settle(relay, lambda: len(sink.produced) == 3)
    # kept after the START went (one produced by then), before the COMPLETE went; the RUNNING
    # behind it waited for it to be handed over
    assert calls == [(1, 1)] and sink.seqs() == [0, 1, 2] and spool.pending() == 0
    for i in (2, 0, 1):
        sink.answer(i)
    relay.pump()
    assert offsets.committable(P) == 3 and relay.out == 0
    assert counted == ["forwarded"] * 3


def test_a_complete_with_a_marked_output_is_spooled_with_its_runs_later_events(
    kept_lineage: Any,
) -> None:
    relay, sink, spool, offsets, calls, counted = kept_lineage
    _take(relay, offsets, (0, _complete_writing(1, 0, "marked")), (1, _body(1, 1)),
          (2, _complete_writing(2, 0, "broken")), (3, _complete_writing(3, 0, "t")))  # fmt: skip
    _settle(relay, lambda: spool.pending() == 3 and len(sink.produced) == 1)
    # the marked one and the one whose step failed go to a worker, run 1's next behind its own
    assert sorted(seq for seq, _ in calls) == [0, 0, 0]
    with sqlite3.connect(spool.path) as db:
        rows = [(lane, _seq(body), refused) for lane, body, refused in
                db.execute("SELECT lane, body, attempts FROM events ORDER BY id")]  # fmt: skip
    by_run = {lane: [seq for name, seq, _ in rows if name == lane] for lane, _, _ in rows}
    run1, run2 = (Envelope.read(_body(r, 0)).lane for r in (1, 2))
    assert by_run == {run1: [0, 1], run2: [0]} and all(a == 0 for _, _, a in rows)
    assert sink.seqs() == [0] and offsets.committable(P) == 3  # run 3's COMPLETE still out
    assert "forward_failures" not in counted


def test_the_stop_sends_no_complete_whose_lineage_was_not_kept_yet(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool.db", Settings.of())
    entered, release = threading.Event(), threading.Event()
    calls: list[int] = []

    def slow_step(tree: Any) -> bool:
        calls.append(_seq(rawjson.dumps(tree)))
        if len(calls) == LINEAGE_THREADS:
            entered.set()  # every lineage thread is busy
        release.wait(5)
        return False

    intake = Intake(spool, Binder(), WriteThrough(None, SinkLatency(1.0), None, 1.0), Metrics(),
                    lambda _: None, lineage=slow_step)  # fmt: skip
    sink, offsets = Sink(), Offsets()
    relay = Relay(sink, intake, offsets, limit=16)
    try:
        # a COMPLETE per run on every lineage thread, one more waiting for a thread, and a
        # second COMPLETE of run 0 waiting behind its first
        n = LINEAGE_THREADS
        firsts = [(run, _complete_writing(run, run, "t")) for run in range(n + 1)]
        _take(relay, offsets, *firsts, (n + 1, _complete_writing(0, n + 1, "t")))
        assert entered.wait(5)
        threading.Timer(0.2, release.set).start()  # the steps begun end while the stop waits
        relay.finish(0.5)
        # the lineage being kept: those went; the ones not begun: neither kept nor sent
        assert sorted(calls) == list(range(LINEAGE_THREADS))
        assert sorted(sink.seqs()) == list(range(LINEAGE_THREADS)) and spool.pending() == 0
        assert offsets.committable(P) == 0  # none acknowledged: all read again
    finally:
        release.set()
        spool.close()


class AckingSink(Sink):
    """Seq 0 acknowledged inside `produce`, so before its lineage thread reports it handed over
    (`acked` set, then waiting for `go_on`)."""

    def __init__(self, acked: threading.Event, go_on: threading.Event) -> None:
        super().__init__()
        self.acked, self.go_on = acked, go_on

    def produce(self, text: str, key: str | None, told: Told) -> None:
        super().produce(text, key, told)
        if _seq(text) == 0:
            told(None)
            self.acked.set()
            self.go_on.wait(5)


def _take_all(relay: Relay, offsets: Offsets, *bodies: str) -> None:
    _take(relay, offsets, *enumerate(bodies))


def test_a_complete_acknowledged_before_it_was_reported_handed_keeps_the_next_one_first(
    tmp_path: Path,
) -> None:
    """C1's acknowledgement comes before its lineage thread reports it handed over, and C2 (the
    run's next COMPLETE) is at a lineage thread by then: the late report must not let the run's
    next event overtake C2."""
    spool = Spool(tmp_path / "spool.db", Settings.of(spool_max_events=10))
    c2_entered, c2_release, acked, go_on = (threading.Event() for _ in range(4))

    def step(tree: Any) -> bool:
        if _seq(rawjson.dumps(tree)) == 1:
            c2_entered.set()
            c2_release.wait(5)
        return False

    intake = Intake(spool, Binder(), WriteThrough(None, SinkLatency(1.0), None, 1.0), Metrics(),
                    lambda _: None, lineage=step)  # fmt: skip
    sink, offsets = AckingSink(acked, go_on), Offsets()
    relay = Relay(sink, intake, offsets, limit=8)
    try:
        _take_all(relay, offsets, _complete_writing(1, 0, "t"), _complete_writing(1, 1, "u"),
                  _body(1, 2))  # fmt: skip
        assert acked.wait(5)
        relay.pump()  # C1 written: C2 goes to a lineage thread
        assert c2_entered.wait(5)
        go_on.set()  # C1's late report
        for _ in range(50):
            relay.pump()
            relay.wait(0.01)
        assert sink.seqs() == [0]  # C2's lineage is still being kept: nothing of run 1 after it
        c2_release.set()
        _settle(relay, lambda: len(sink.produced) == 3)
        assert sink.seqs() == [0, 1, 2]
    finally:
        go_on.set()
        c2_release.set()
        relay.finish(0.5)
        spool.close()


def test_an_event_refused_at_once_stops_its_runs_next_events_in_the_same_batch(
    tmp_path: Path,
) -> None:
    """Handing an event over raised (librdkafka's queue full): the run's next event of the same
    fetch waits, and both are spooled in order once the report is settled."""
    spool = Spool(tmp_path / "spool.db", Settings.of(spool_max_events=10))

    class FullSink(Sink):
        def produce(self, text: str, key: str | None, told: Told) -> None:
            if _seq(text) == 0:
                raise RuntimeError("librdkafka's queue is full")
            super().produce(text, key, told)

    intake = Intake(spool, Binder(), WriteThrough(None, SinkLatency(1.0), None, 1.0), Metrics(),
                    lambda _: None)  # fmt: skip
    sink, offsets = FullSink(), Offsets()
    relay = Relay(sink, intake, offsets, limit=8)
    try:
        _take_all(relay, offsets, _body(1, 0, "START"), _body(1, 1), _body(2, 5, "START"))
        assert sink.seqs() == [5]  # run 2's START only
        relay.pump()
        assert _spooled(spool) == [0, 1]
    finally:
        relay.finish(0.1)
        spool.close()


def test_an_event_keyed_apart_from_its_runs_events_out_waits_for_them(parts: Any) -> None:
    """A run's events go out together only on one key (one partition: Kafka's order); one the
    listener keyed otherwise (another parent) waits for their acknowledgements."""
    relay, sink, spool, offsets, _, _ = parts
    other = rawjson.loads(_body(1, 1))
    other["run"]["facets"]["parent"] = {
        "run": {"runId": "00000000-0000-4000-8000-00000000ffff"},
        "job": {"namespace": "n", "name": "another"},
    }
    _take(relay, offsets, (0, _body(1, 0, "START")), (1, rawjson.dumps(other)), (2, _body(1, 2)))
    assert sink.seqs() == [0]
    sink.answer(0)
    relay.pump()
    assert sink.seqs() == [0, 1]  # on its own key now; the next waits for it in turn
    sink.answer(1)
    relay.pump()
    assert sink.seqs() == [0, 1, 2] and spool.pending() == 0


def test_answered_events_behind_an_unanswered_one_count_towards_the_bound(parts: Any) -> None:
    """An acknowledged event stays in memory behind an earlier one of its run not answered yet:
    the bound (`full`) counts it, so a slow first answer cannot let memory grow past `limit`."""
    relay, sink, _, offsets, _, _ = parts  # limit 4
    _take(relay, offsets, *[(i, _body(1, i)) for i in range(4)])
    assert relay.full()
    for i in (1, 2, 3):
        sink.answer(i)
    relay.pump()
    assert relay.out == 1 and relay.full()  # three answered, still held behind seq 0
    sink.answer(0)
    relay.pump()
    assert relay.out == 0 and not relay.full()
    assert offsets.committable(P) == 4


def test_a_late_handed_over_report_leaves_the_runs_next_lane_alone(tmp_path: Path) -> None:
    """C1 is acknowledged before its lineage thread reports it handed over; its lane ends and
    the run's next event begins a new lane. The late report must not end that new lane: the run
    stays the relay's (the spool holds it) while the event is out, and the bound frees."""
    spool = Spool(tmp_path / "spool.db", Settings.of(spool_max_events=10))
    acked, go_on = threading.Event(), threading.Event()

    intake = Intake(spool, Binder(), WriteThrough(None, SinkLatency(1.0), None, 1.0), Metrics(),
                    lambda _: None, lineage=lambda tree: False)  # fmt: skip
    sink, offsets = AckingSink(acked, go_on), Offsets()
    relay = Relay(sink, intake, offsets, limit=1)
    lane = Envelope.read(_body(1, 0)).lane or ""
    try:
        _take(relay, offsets, (0, _complete_writing(1, 0, "t")))
        assert acked.wait(5)
        relay.pump()  # C1 written: its lane ends
        _take(relay, offsets, (1, _body(1, 1)))  # a new lane of run 1, its event out
        go_on.set()  # C1's late report
        for _ in range(50):
            relay.pump()
            relay.wait(0.01)
        assert lane in relay._lanes and lane in spool.lanes._direct  # still the relay's run
        sink.answer(1)
        relay.pump()
        assert sink.seqs() == [0, 1] and not relay.full() and offsets.committable(P) == 2
        assert lane not in spool.lanes._direct  # back to the spool once nothing is out
    finally:
        go_on.set()
        relay.finish(0.5)
        spool.close()

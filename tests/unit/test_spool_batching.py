"""The spool's shared commits: deletes (`done`) join the puts' group commit, each waiting thread
is woken once, a full disk still lets deletes through, and events put by this process are handed
to workers from memory (their type and runs known, no database read) until they change."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from test_spool_and_events import event

from lineage_quality.producer import Evaluator, Producer, Spool
from lineage_quality.producer import spooled as spooled_module
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.spool import SpoolFullError
from lineage_quality.producer.spool import commit as commit_module
from lineage_quality.producer.spool import index as index_module
from lineage_quality.producer.spool.commit import Delete, Put


def _trace(spool: Spool, begin_seconds: float = 0.0) -> list[str]:
    statements: list[str] = []

    def trace(sql: str) -> None:
        statements.append(sql)
        if sql.startswith("BEGIN") and begin_seconds:
            time.sleep(begin_seconds)

    spool.store.db.set_trace_callback(trace)
    return statements


def test_deletes_share_the_puts_commits_and_stay_deleted(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    first = [spool.put(event(f"r{t}", 0), [f"r{t}"]) for t in range(6)]
    statements = _trace(spool, 0.01)
    errors: list[BaseException] = []

    def put_then_done(t: int) -> None:
        try:
            for n in range(1, 11):
                spool.put(event(f"r{t}", n), [f"r{t}"])
            spool.done(first[t])
        except BaseException as exc:  # asserted below
            errors.append(exc)

    threads = [threading.Thread(target=put_then_done, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    commits = sum(1 for s in statements if s == "COMMIT")
    assert commits < 66 / 2, f"{commits} commits for 60 puts and 6 deletes: not shared"
    assert spool.usage()[0] == 60
    spool.close()
    reopened = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    ids = {row[0] for row in reopened.store.db.execute("SELECT id FROM events")}
    assert not ids & set(first)
    assert len(ids) == 60


def test_a_batch_of_deletes_only_is_not_synced_and_a_batch_with_puts_is(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    a = spool.put(event("a", 0))
    statements = _trace(spool)
    spool.done(a)
    assert "PRAGMA synchronous=NORMAL" in statements
    statements.clear()
    spool.put(event("a", 1))
    assert statements[0] == "PRAGMA synchronous=FULL"  # before the put's BEGIN
    assert spool.store.durable


def test_a_full_disk_refuses_the_puts_of_a_batch_and_still_deletes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=4096))
    kept = spool.put(event("a", 0), ["a"], +1)

    def full(body: str, lane: str, size: int) -> int:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(spool.commit, "_insert", full)
    put = Put(event("b", 0), "b", 10, ("b",), 0)
    deletion = Delete(kept, ("a",), -1)
    with spool.store.db_lock:
        spool.commit._commit_batch([put, deletion])
    assert isinstance(put.error, SpoolFullError)
    assert deletion.error is None and deletion.settled
    assert spool.store.db.execute("SELECT count(*) FROM events").fetchone()[0] == 0
    assert spool.usage()[0] == 0
    assert spool.run_report("a") == (0, [])


def test_an_interrupted_commit_fails_its_puts_and_the_next_put_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    real = spool.commit._commit_batch

    def interrupted(batch: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(spool.commit, "_commit_batch", interrupted)
    with pytest.raises(KeyboardInterrupt):
        spool.put(event("a", 0))
    monkeypatch.setattr(spool.commit, "_commit_batch", real)
    assert spool.put(event("a", 1)) > 0  # not left waiting for a commit that never ends
    assert spool.usage()[0] == 1


def test_every_waiting_put_is_woken_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    _trace(spool, 0.01)
    waiters: list[CountingLock] = []

    class CountingLock:
        def __init__(self) -> None:
            self._lock = threading.Lock()
            self.releases = 0
            waiters.append(self)

        def acquire(self) -> bool:
            return self._lock.acquire()

        def release(self) -> None:
            self.releases += 1
            self._lock.release()

    monkeypatch.setattr(commit_module, "_waiter", CountingLock)

    def put_ten(t: int) -> None:
        for n in range(10):
            spool.put(event(f"r{t}", n))

    threads = [threading.Thread(target=put_ten, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert spool.usage()[0] == 60
    assert waiters, "no put waited: the commits were not slow enough to overlap"
    # settled by another thread's commit, or handed the next commit: one wakeup either way
    assert [w.releases for w in waiters] == [1] * len(waiters)


def test_events_put_here_are_taken_from_memory_with_their_type_and_runs(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    body = event("a", 0)
    spool.put(body, ["a", "parent"], 0, "a", "START")
    real_reader = spool.store.reader
    spool.store.reader = None  # type: ignore[assignment]  # any database read would fail
    item = spool.claim(timeout=1)
    assert item is not None
    assert (item.body, item.event_type, item.run_ids, item.enriched, item.attempts) == (
        body,
        "START",
        ("a", "parent"),
        False,
        0,
    )
    spool.store.reader = real_reader
    spool.attempted(item.id)  # from now on read from the database, with its attempts
    spool.release(item.lane)
    again = spool.claim(timeout=1)
    assert again is not None
    assert (again.attempts, again.event_type) == (1, None)
    spool.replace(again.id, body)
    spool.release(again.lane)
    spool.put(event("b", 0), ["b"], 0, "b", "START")
    spool.done(again.id)
    assert len(spool.index._memory) == 1
    spool.close()
    reopened = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    after = reopened.claim(timeout=1)
    assert after is not None and after.event_type is None  # read back, parsed by the worker


def test_memory_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "MEMORY_BYTES", 300)
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    ids = [spool.put(event("a", n), ["a"], 0, "a", "START") for n in range(10)]
    assert 0 < len(spool.index._memory) < 10
    assert spool.index._memory_bytes <= 300
    for event_id in ids:
        spool.done(event_id)
    assert spool.index._memory == {} and spool.index._memory_bytes == 0


def test_a_received_event_of_a_type_never_evaluated_is_forwarded_without_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[str] = []

    class Sink:
        def send(self, body: str) -> None:
            sent.append(body)

        def close(self) -> None:
            pass

    producer = Producer(Evaluator([]), Sink(), Spool(tmp_path / "s.db"), Settings.of(port=0))  # type: ignore[arg-type]
    start = json.dumps(
        {
            "eventType": "START",
            "eventTime": "2026-01-01T00:00:00Z",
            "producer": "p",
            "run": {"runId": "r1", "facets": {"parent": {"run": {"runId": "p1"}}}},
            "job": {"namespace": "n", "name": "j"},
        }
    )
    fail = start.replace('"START"', '"FAIL"')
    parsed: list[str] = []
    real_parse = spooled_module.parse

    def spy(body: str) -> Any:
        parsed.append(json.loads(body)["eventType"])
        return real_parse(body)

    monkeypatch.setattr(spooled_module, "parse", spy)
    producer._accept(start, json.loads(start))
    producer._accept(fail, json.loads(fail))
    producer.start()
    try:
        assert producer.spool.wait_empty(timeout=10)
    finally:
        producer.stop()
    assert sent == [start, fail]
    assert parsed == []  # parsed once, by the receiver: a FAIL is handed over parsed
    assert producer.spool.run_failed("r1")  # and its run is remembered as failed
    assert producer.spool.run_failed("r1")
    assert producer.spool.run_report("r1") == (0, [])


def _count_wakes(spool: Spool) -> list[int]:
    woken: list[int] = []
    real_notify = spool.lanes.changed.notify

    def notify(n: int = 1) -> None:
        woken.append(n)
        real_notify(n)

    spool.lanes.changed.notify = notify  # type: ignore[method-assign]
    return woken


def test_workers_are_woken_only_for_a_lane_they_can_claim(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    spool.lanes.helper_after = 3600.0  # no worker counts as slow (see the tests below)
    spool.put(event("a", 0), ["a"], 0, "a")
    held = spool.claim(timeout=1)
    assert held is not None and held.lane == "a"
    woken = _count_wakes(spool)
    spool.put(event("a", 1), ["a"], 0, "a")  # its lane is held: its worker goes on with it
    assert woken == []
    spool.lanes.helper_after = 0.0  # the worker holding "a" is slow: "b" gets a worker of its own
    spool.put(event("b", 0), ["b"], 0, "b")
    assert woken == [1]
    woken.clear()
    spool.lanes.helper_after = 3600.0
    spool.done(held.id)
    following = spool.claim_next("a")
    assert following is not None and json.loads(following.body)["n"] == 1
    spool.done(following.id)
    assert spool.claim_next("a") is None  # the lane ran dry: nobody to wake
    assert woken == []


def test_a_draining_spool_wakes_wait_empty_and_not_the_idle_workers(tmp_path: Path) -> None:
    # In pass-through the spool drains after nearly every event: waking every idle worker each
    # time cost ~3 context switches per event (bench/passthrough.py: 9.3 -> 6.4 per event).
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    workers: list[str] = []
    emptied: list[str] = []
    real_workers, real_emptied = spool.lanes.changed.notify_all, spool.lanes.emptied.notify_all

    def notify_workers() -> None:
        workers.append("all")
        real_workers()

    def notify_emptied() -> None:
        emptied.append("all")
        real_emptied()

    spool.lanes.changed.notify_all = notify_workers  # type: ignore[method-assign]
    spool.lanes.emptied.notify_all = notify_emptied  # type: ignore[method-assign]
    spool.put(event("a", 0), ["a"], 0, "a")
    taken = spool.claim(timeout=1)
    assert taken is not None
    ended = threading.Event()
    waiter = threading.Thread(target=lambda: spool.wait_empty(10) and ended.set())
    waiter.start()
    time.sleep(0.05)  # waiting on its condition
    spool.done(taken.id)
    spool.release("a")
    waiter.join(10)
    assert ended.is_set() and spool.pending() == 0
    assert workers == [] and emptied == ["all"]


def _holding_a(tmp_path: Path) -> tuple[Spool, Any, list[int]]:
    """A spool whose one worker holds lane "a" (never slow), and the wakeups from then on."""
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    spool.lanes.helper_after = 3600.0
    spool.put(event("a", 0), ["a"], 0, "a")
    held = spool.claim(timeout=1)
    assert held is not None
    return spool, held, _count_wakes(spool)


def test_another_lane_waits_for_a_worker_about_to_come_back(tmp_path: Path) -> None:
    # a sink that answers within helper_after: one worker forwards every lane's events in turn
    spool, held, woken = _holding_a(tmp_path)
    spool.put(event("b", 0), ["b"], 0, "b")
    assert woken == []  # the worker holding "a" takes it next
    spool.done(held.id)
    assert spool.claim_next("a") is None
    following = spool.claim(timeout=0)
    assert following is not None and following.lane == "b"
    spool.lanes.helper_after = 0.0  # the same worker, now as slow as a remote sink
    spool.put(event("c", 0), ["c"], 0, "c")
    assert woken == [1]


def test_a_parked_worker_brings_another_in(tmp_path: Path) -> None:
    spool, _held, woken = _holding_a(tmp_path)
    spool.park("a")  # nothing else waits: nobody to wake
    assert woken == []
    spool.put(event("b", 0), ["b"], 0, "b")  # "a"'s worker waits for an evaluation
    assert woken == [1]
    spool.unpark("a")
    spool.put(event("c", 0), ["c"], 0, "c")
    assert woken == [1]


def test_a_slow_sink_brings_helpers_in_for_events_already_spooled(tmp_path: Path) -> None:
    # a backlog (after an outage, a restart) to a sink slower than helper_after: each event a
    # worker takes after a slow one wakes another worker for another lane's events
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    for lane in ("a", "a", "b", "c"):
        spool.put(event(lane, 0), [lane], 0, lane)
    spool.lanes.helper_after = 0.0
    first = spool.claim(timeout=1)
    assert first is not None and first.lane == "a"
    woken = _count_wakes(spool)
    spool.done(first.id)
    second = spool.claim_next("a")  # the same lane
    assert second is not None and woken == [1]
    spool.done(second.id)
    assert spool.claim_next("a") is None
    third = spool.claim(timeout=1)  # another lane, by the same worker
    assert third is not None and third.lane == "b" and woken == [1, 1]
    taken: list[Any] = []
    helper = threading.Thread(target=lambda: taken.append(spool.claim(timeout=1)))
    helper.start()
    helper.join(5)
    assert taken[0] is not None and taken[0].lane == "c"  # the helper's
    for done_with in (third, taken[0]):
        spool.done(done_with.id)
        spool.release(done_with.lane)
    spool.lanes.helper_after = 3600.0  # from here on, a fast sink
    woken.clear()
    spool.put(event("d", 0), ["d"], 0, "d")
    fourth = spool.claim(timeout=1)
    assert fourth is not None and fourth.lane == "d" and woken == [1]
    spool.put(event("e", 0), ["e"], 0, "e")  # d's worker will be back for it: nobody woken
    spool.done(fourth.id)
    assert spool.claim_next("d") is None
    fifth = spool.claim(timeout=1)
    assert fifth is not None and fifth.lane == "e" and woken == [1]

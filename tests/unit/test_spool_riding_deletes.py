"""Deletes that ride on a commit in flight (`Spool.done` while another thread commits): the worker
gets control back at once, the event is no longer claimable, its row stays in the database until
the commit after it (so a crash before then forwards it again, never loses it), and that commit
comes without anyone waiting for it: with the next waiting put, or from the flusher."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from test_spool_and_events import event  # the same event shape as the other spool tests

from lineage_quality.producer.settings import Settings
from lineage_quality.producer.spool import Spool


class _Gate:
    """Holds every BEGIN of the spool's writer until opened, once armed: a commit in flight
    that stays in flight as long as a test needs. Records the statements."""

    def __init__(self, spool: Spool) -> None:
        self.armed = False
        self.open = threading.Event()
        self.statements: list[str] = []
        spool.store.db.set_trace_callback(self._trace)

    def _trace(self, sql: str) -> None:
        self.statements.append(sql)
        if self.armed and sql.startswith("BEGIN"):
            assert self.open.wait(30), "gate never opened"


def _rows(path: Path) -> set[int]:
    """Event ids committed in the database, read on a connection of its own."""
    with sqlite3.connect(path) as db:
        return {int(r[0]) for r in db.execute("SELECT id FROM events")}


def _until(condition: object, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.001)


def _hold_a_commit(spool: Spool, gate: _Gate, body: str) -> threading.Thread:
    """A put from another thread, stuck at its BEGIN until the gate opens."""
    gate.armed = True
    put = threading.Thread(target=spool.put, args=(body, ["other"]))
    put.start()
    _until(lambda: spool.commit._committing)
    return put


def test_a_delete_rides_on_the_commit_in_flight_then_the_flusher_commits_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    spool = Spool(path, Settings.of(spool_reserve_bytes=0))
    first = spool.put(event("a", 0), ["a"])
    second = spool.put(event("a", 1), ["a"])
    gate = _Gate(spool)
    held = _hold_a_commit(spool, gate, event("other", 0))
    try:
        item = spool.claim(timeout=1)
        assert item is not None and item.id == first
        started = time.monotonic()
        spool.done(item.id, ["a"])
        assert time.monotonic() - started < 1.0  # did not wait for the held commit
        assert spool.commit._committing and not gate.open.is_set()
        # not handed out again, though its row is still there: a crash now forwards it again
        following = spool.claim_next(item.lane)
        assert following is not None and following.id == second
        assert first in _rows(path)
        assert spool.usage()[0] == 1  # `second`: not `first`, nor the put not committed yet
    finally:
        gate.open.set()
        held.join(10)
    # nobody waited on the delete: the flusher committed it after the held commit
    assert spool.commit.wait_committed(time.monotonic() + 10)
    assert first not in _rows(path)
    assert second in _rows(path)
    assert sum(1 for s in gate.statements if s == "COMMIT") == 2  # the held put, then the delete
    spool.close()


def test_a_riding_delete_joins_the_next_waiting_put_in_one_transaction(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    spool = Spool(path, Settings.of(spool_reserve_bytes=0))
    first = spool.put(event("a", 0), ["a"])
    gate = _Gate(spool)
    held = _hold_a_commit(spool, gate, event("other", 0))
    later = threading.Thread(target=spool.put, args=(event("b", 0), ["b"]))
    try:
        later.start()  # waits behind the held commit
        _until(lambda: len(spool.commit._queue) == 1)
        item = spool.claim(timeout=1)
        assert item is not None and item.id == first
        spool.done(item.id, ["a"])
        assert len(spool.commit._queue) == 2
    finally:
        gate.open.set()
        held.join(10)
        later.join(10)
    assert spool.commit.wait_committed(time.monotonic() + 10)
    assert first not in _rows(path) and len(_rows(path)) == 2
    # the waiting put and the delete went in the same transaction, after the held one
    second_begin = [i for i, s in enumerate(gate.statements) if s.startswith("BEGIN")][1]
    tail = gate.statements[second_begin:]
    commit = tail.index("COMMIT")
    body = tail[:commit]
    assert any(s.startswith("INSERT INTO events") for s in body)
    assert any(s.startswith("DELETE FROM events") for s in body)
    assert tail.count("COMMIT") == 1
    spool.close()


def test_close_and_wait_empty_wait_for_riding_deletes(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    spool = Spool(path, Settings.of(spool_reserve_bytes=0))
    ids = [spool.put(event("a", n), ["a"]) for n in range(3)]
    gate = _Gate(spool)
    held = _hold_a_commit(spool, gate, event("other", 0))
    item = spool.claim(timeout=1)
    assert item is not None
    for event_id in ids:
        spool.done(event_id, ["a"])  # all ride: the held commit is still in flight
    assert not spool.wait_empty(0.2)  # the held put's event is there, and nothing committed
    opener = threading.Timer(0.3, gate.open.set)
    opener.start()
    spool.close()  # waits for the held commit, then for the flusher's
    held.join(10)
    opener.join()
    assert _rows(path) == {max(_rows(path))}  # only the held put's event is left
    assert not set(ids) & _rows(path)
    reopened = Spool(path, Settings.of(spool_reserve_bytes=0))
    assert reopened.usage()[0] == 1
    reopened.close()

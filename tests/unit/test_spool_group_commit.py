"""The spool's group commit: puts from many threads at once share transactions (one disk sync
for several events), each put returns only once its event is committed, a refusal or a failed
commit reaches exactly the puts it concerns, and nothing acknowledged is lost."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from test_spool_and_events import event  # the same event shape as the other spool tests

from lineage_quality.producer.settings import Settings
from lineage_quality.producer.spool import Spool, SpoolFullError


def _slow_commits(spool: Spool, seconds: float) -> list[str]:
    """Trace the spool's statements, each BEGIN taking `seconds`: while one batch is being
    written the other threads queue up, as they do behind a real disk sync."""
    statements: list[str] = []

    def trace(sql: str) -> None:
        statements.append(sql)
        if sql.startswith("BEGIN"):
            time.sleep(seconds)

    spool.store.db.set_trace_callback(trace)
    return statements


def _put_from_threads(spool: Spool, threads: int, each: int) -> tuple[list[int], list[Any]]:
    ids: list[int] = []
    errors: list[Any] = []
    lock = threading.Lock()

    def work(t: int) -> None:
        for n in range(each):
            try:
                got = spool.put(event(f"r{t}", n), [f"r{t}"])
            except Exception as exc:  # collected, asserted on below
                with lock:
                    errors.append(exc)
                continue
            with lock:
                ids.append(got)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return ids, errors


def test_concurrent_puts_share_commits_and_all_survive_a_reopen(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    statements = _slow_commits(spool, 0.01)
    ids, errors = _put_from_threads(spool, threads=8, each=20)
    assert errors == []
    assert len(ids) == len(set(ids)) == 160
    commits = sum(1 for s in statements if s == "COMMIT")
    assert commits <= 160 / 3, f"{commits} commits for 160 events: no group commit"
    assert spool.usage()[0] == 160
    spool.close()
    reopened = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    bodies = reopened.store.db.execute("SELECT id, body FROM events").fetchall()
    assert sorted(i for i, _ in bodies) == sorted(ids)
    # each run's events were stored in the order their thread put them
    for t in range(8):
        ns = [
            json.loads(b)["n"]
            for _, b in sorted(bodies)
            if json.loads(b)["run"]["runId"] == f"r{t}"
        ]
        assert ns == list(range(20))
    # and every run was recorded
    assert all(reopened.run_report(f"r{t}") is not None for t in range(8))


def test_the_bound_refuses_only_the_puts_past_it(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "s.db", Settings.of(spool_max_events=50, spool_reserve_bytes=0))
    _slow_commits(spool, 0.01)
    ids, errors = _put_from_threads(spool, threads=6, each=12)
    assert len(ids) == 50
    assert len(errors) == 72 - 50
    assert all(isinstance(e, SpoolFullError) for e in errors)
    assert spool.usage()[0] == 50
    assert spool.store.db.execute("SELECT count(*) FROM events").fetchone()[0] == 50


def test_keep_many_is_one_commit_in_order_and_all_or_none_at_the_bound(tmp_path: Path) -> None:
    from lineage_quality.producer.envelope import Envelope

    spool = Spool(tmp_path / "s.db", Settings.of(spool_max_events=5, spool_reserve_bytes=0))
    statements = _slow_commits(spool, 0)
    first = [Envelope.read(event("a", n)) for n in range(3)]
    ids = spool.keep_many(first)
    assert ids == sorted(ids) and len(ids) == 3
    assert sum(s.startswith("BEGIN") for s in statements) == 1  # one transaction, one sync
    # three more would pass the bound of 5: none is kept (not the first two of them)
    with pytest.raises(SpoolFullError):
        spool.keep_many([Envelope.read(event("b", n)) for n in range(3)])
    assert spool.usage()[0] == 3
    rows = spool.store.db.execute("SELECT body FROM events ORDER BY id").fetchall()
    assert [json.loads(r[0])["n"] for r in rows] == [0, 1, 2]
    assert [json.loads(r[0])["run"]["runId"] for r in rows] == ["a", "a", "a"]
    # two fit
    assert len(spool.keep_many([Envelope.read(event("b", n)) for n in range(2)])) == 2
    assert spool.usage()[0] == 5
    claimed = spool.claim(1)
    assert claimed is not None and json.loads(claimed.body)["n"] == 0


def test_a_failed_commit_fails_every_put_of_its_batch_and_keeps_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    kept = spool.put(event("a", 0))
    real = spool.commit._insert
    calls = {"n": 0}

    def failing(body: str, lane: str, size: int) -> int:
        calls["n"] += 1
        if calls["n"] == 2:
            raise sqlite3.OperationalError("disk I/O error")
        return real(body, lane, size)

    monkeypatch.setattr(spool.commit, "_insert", failing)
    _slow_commits(spool, 0.05)
    ids, errors = _put_from_threads(spool, threads=4, each=1)
    # the batch holding the second insert failed as a whole: its puts raised, none was kept
    assert errors, "no put failed"
    assert all(isinstance(e, sqlite3.Error) for e in errors)
    stored = {row[0] for row in spool.store.db.execute("SELECT id FROM events")}
    assert stored == {kept, *ids}
    assert spool.usage()[0] == len(stored)


def test_done_deletes_and_counts_the_run_down_in_one_step(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    first = spool.put(event("a", 0), ["a"], +1)
    spool.put(event("a", 1), ["a"], +1)
    assert spool.run_report("a") == (2, [])
    spool.done(first, ["a"], -1)
    assert spool.run_report("a") == (1, [])
    assert spool.usage()[0] == 1
    spool.close()
    reopened = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    assert reopened.run_report("a") == (1, [])
    assert reopened.usage()[0] == 1


def test_claims_read_committed_events_while_puts_commit(tmp_path: Path) -> None:
    # workers claim from memory and read on their own connection: every claimed event is one
    # that was committed, each lane in order, none twice
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    _slow_commits(spool, 0.005)
    seen: list[tuple[str, int]] = []
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            item = spool.claim(timeout=0.05)
            if item is None:
                continue
            body = json.loads(item.body)
            seen.append((body["run"]["runId"], body["n"]))
            spool.done(item.id)
            spool.release(item.lane)

    workers = [threading.Thread(target=work) for _ in range(3)]
    for w in workers:
        w.start()
    _, errors = _put_from_threads(spool, threads=4, each=25)
    assert errors == []
    assert spool.wait_empty(timeout=30)
    stop.set()
    for w in workers:
        w.join()
    assert len(seen) == len(set(seen)) == 100
    for t in range(4):
        assert [n for run, n in seen if run == f"r{t}"] == list(range(25))
    spool.close()
    assert Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0)).pending() == 0

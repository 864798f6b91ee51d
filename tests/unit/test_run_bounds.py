"""Run bookkeeping is bounded (issue 27.4): a run id longer than a UUID needs is refused with a
400, and the spool's `runs` / `run_verdicts` tables never grow past `RunBookBounds`: past a bound
the oldest runs are expired whole, and an expired run is unknown (404, `gate` exits 2), never
"evaluated" with verdicts missing."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_receiver_attacks import raw, request, status

from lineage_quality.bounds import RunBookBounds
from lineage_quality.producer.events import InvalidEventError, check_event
from lineage_quality.producer.receiver import Receiver
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.spool import Spool

HUGE = "r" * 1_500_000  # the attack of issue 27: 1.5 MB run ids


def start(run_id: str, parent: str | None = None, root: str | None = None) -> dict[str, object]:
    run: dict[str, object] = {"runId": run_id}
    if parent is not None:
        facet: dict[str, object] = {
            "run": {"runId": parent},
            "job": {"namespace": "n", "name": "parent"},
        }
        if root is not None:
            facet["root"] = {"run": {"runId": root}, "job": {"namespace": "n", "name": "root"}}
        run["facets"] = {"parent": facet}
    return {
        "eventType": "START",
        "eventTime": "2026-11-22T06:00:00.000Z",
        "producer": "https://example.com/p",
        "run": run,
        "job": {"namespace": "n", "name": "j"},
    }


def uid() -> str:
    return str(uuid.uuid4())


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, list[str]]]:
    got: list[str] = []
    r = Receiver(lambda text, _event: got.append(text), Settings.of(port=0, api_key=None))
    r.start()
    yield r, got
    r.stop()


def test_a_run_id_longer_than_a_uuid_is_refused_with_a_clear_400(
    receiver: tuple[Receiver, list[str]],
) -> None:
    server, got = receiver
    cases = {
        "run.runId": start(HUGE),
        "run.facets.parent.run.runId": start(uid(), parent=HUGE),
        "run.facets.parent.root.run.runId": start(uid(), parent=uid(), root=HUGE),
    }
    for field, event in cases.items():
        with pytest.raises(InvalidEventError, match=f"`{field}` is longer than"):
            check_event(event)
        body = json.dumps(event).encode()
        answer = raw(server, request(f"Content-Length: {len(body)}\r\n", body))
        assert status(answer) == 400, field
        assert f"`{field}` is longer than".encode() in answer
    assert got == []
    # what real senders use passes: a UUID (any spelling Python's uuid reads) and short ids
    for ok in (uid(), uid().upper(), "urn:uuid:" + uid(), uuid.uuid4().hex, "r1"):
        check_event(start(ok, parent=uid(), root=ok))


def runs_rows(spool: Spool) -> int:
    return int(spool.store.db.execute("SELECT count(*) FROM runs").fetchone()[0])


def test_run_bookkeeping_never_grows_past_its_bound(tmp_path: Path) -> None:
    spool = Spool(
        tmp_path / "s.db", Settings.of(spool_reserve_bytes=0, runs=RunBookBounds(max_runs=10))
    )
    ids = [uid() for _ in range(40)]
    for run_id in ids:
        spool.put(json.dumps(start(run_id)), [run_id], 0)
        assert runs_rows(spool) <= 10
    assert runs_rows(spool) == 10
    assert spool.run_report(ids[-1]) == (0, [])  # the newest are kept
    assert spool.run_report(ids[0]) is None  # the oldest expired: unknown
    spool.close()
    reopened = Spool(
        tmp_path / "s.db", Settings.of(spool_reserve_bytes=0, runs=RunBookBounds(max_runs=5))
    )
    reopened.run_seen([uid()], 0)  # a smaller bound holds from the next write on
    assert runs_rows(reopened) == 5
    reopened.close()


def test_verdicts_count_against_their_byte_bound_and_expire_whole_runs(tmp_path: Path) -> None:
    bounds = RunBookBounds(max_verdict_bytes=10_000)
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0, runs=bounds))
    body = json.dumps([{"rule": "r", "status": "FAILED", "message": "x" * 3000}])
    ids = [uid() for _ in range(8)]
    for run_id in ids:
        spool.run_seen([run_id], +1)
        spool.add_verdicts([run_id], body)
        kept = spool.store.db.execute("SELECT coalesce(sum(length(body)), 0) FROM run_verdicts")
        assert kept.fetchone()[0] <= 10_000
    assert spool.run_report(ids[-1]) == (1, [body])
    for run_id in ids[:-3]:
        assert spool.run_report(run_id) is None  # expired whole: unknown, not verdict-less
    # a body alone over the bound cannot be kept: its run becomes unknown, never a pass
    spool.add_verdicts([ids[-1]], json.dumps([{"message": "y" * 20_000}]))
    assert spool.run_report(ids[-1]) is None
    spool.close()


def test_a_run_expired_while_its_complete_waited_is_unknown_after(tmp_path: Path) -> None:
    spool = Spool(
        tmp_path / "s.db", Settings.of(spool_reserve_bytes=0, runs=RunBookBounds(max_runs=5))
    )
    waiting = uid()
    event_id = spool.put(json.dumps(start(waiting)), [waiting], +1)
    for _ in range(10):  # other runs push it out
        other = uid()
        spool.put(json.dumps(start(other)), [other], 0)
    spool.add_verdicts([waiting], "[]")  # not kept: the run's earlier state is gone
    spool.done(event_id, [waiting], -1)
    assert spool.run_report(waiting) is None  # not (0, []): that would read as "all passed"
    assert runs_rows(spool) <= 5
    spool.close()


def test_oversized_run_ids_never_reach_the_runs_table(tmp_path: Path) -> None:
    """The issue's attack below the receiver (which refuses them): 40 events whose run, parent
    and root ids are huge made spool.db 355 MB; they are not recorded at all."""
    spool = Spool(
        tmp_path / "s.db", Settings.of(spool_reserve_bytes=0, spool_max_bytes=5 * 1024 * 1024)
    )
    for n in range(40):
        ids = [f"{n}-{'r' * 200_000}", f"{n}-{'p' * 200_000}", f"{n}-{'q' * 200_000}"]
        event_id = spool.put(json.dumps(start(uid())), ids, 0)
        spool.done(event_id, ids, 0)
    assert spool.wait_empty(10)
    assert runs_rows(spool) == 0
    spool.close()
    assert (tmp_path / "s.db").stat().st_size < 2 * 1024 * 1024

"""The spool's disk fills up: the receiver answers 503 ("disk is full"), nothing accepted is lost,
and once the sink has taken the backlog the producer accepts events again.

Two ways to fill the disk: a real 512 KiB tmpfs (we are root in CI; skipped where mounting is not
permitted), and SQLite's `max_page_count` (the same SQLITE_FULL, on any machine)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from faultkit import RecordingSink, Sender, http_transport, make_event, record_fault, tmpfs

from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.backoff import Backoff
from lineage_quality.producer.settings import Settings

PAD = 4000  # bytes per event, so a few dozen fill the disk
MAX_EVENTS = 400


@pytest.fixture(params=["tmpfs-512k", "max_page_count"])
def full_spool(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Spool]:
    disk = tmp_path / "disk"
    if request.param == "tmpfs-512k":
        with tmpfs(disk, "512k") as mounted:
            if not mounted:
                pytest.skip("mounting a tmpfs is not permitted here (max_page_count covers it)")
            spool = Spool(
                disk / "spool.db",
                Settings.of(spool_reserve_bytes=128 * 1024, spool_reserve_retry=0),
            )
            yield spool
            spool.close()
    else:
        spool = Spool(
            disk / "spool.db", Settings.of(spool_reserve_bytes=64 * 1024, spool_reserve_retry=0)
        )
        pages = spool.store.db.execute("PRAGMA page_count").fetchone()[0]
        spool.store.db.execute(f"PRAGMA max_page_count={pages + 60}")
        yield spool
        spool.close()


def test_full_disk_gives_503_then_recovers_without_loss(
    full_spool: Spool, sink: RecordingSink, request: pytest.FixtureRequest
) -> None:
    sink.hold()  # nothing drains while the disk fills
    producer = Producer(
        Evaluator([]),
        Forwarder(http_transport(sink)),
        full_spool,
        Settings.of(port=0, retry=Backoff(initial=0.05, maximum=0.2)),
    )
    producer.start()
    sender = Sender(producer.url)
    events = [make_event(i % 7, i, pad=PAD) for i in range(MAX_EVENTS)]
    accepted: list[dict[str, object]] = []
    try:
        for event in events:
            status, payload = sender.post_raw(json.dumps(event).encode(), sender.headers)
            if status == 503:
                assert "disk is full" in json.loads(payload)["error"]
                break
            assert status == 201
            accepted.append(event)
        full_after = len(accepted)
        assert 0 < full_after < MAX_EVENTS, "the disk never filled up"
        # still full: refused again, and the server keeps serving
        assert sender.post(events[full_after]) == 503

        sink.release()
        assert sink.wait_for(lambda s: len(s.received()) == full_after, timeout=60)
        assert producer.spool.wait_empty(timeout=60)
        # room again: the rest goes through, a few at a time as a retrying sender would
        rest = events[full_after : full_after + 2 * full_after]
        for start in range(0, len(rest), 5):
            assert producer.spool.wait_empty(timeout=60)
            for event in rest[start : start + 5]:
                assert sender.post(event) == 201
                accepted.append(event)
        assert sink.wait_for(lambda s: len(s.received()) == len(accepted), timeout=60)
    finally:
        sender.close()
        producer.stop()
    lost = record_fault(
        f"disk full ({request.node.callspec.params['full_spool']})",
        sent=len(accepted),
        accepted=len(accepted),
        refused_503=2,
        forwarded=len(sink.received()),
        full_after=full_after,
        duplicates=len(sink.events) - len(sink.received()),
    )
    assert lost == 0

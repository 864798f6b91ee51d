"""Spool lanes, bounds, hand-over of late results and migration; event validation and lanes;
secrets masked in logs. No Spark, no HTTP."""

from __future__ import annotations

import datetime as dt
import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.producer.events import (
    InvalidEventError,
    check_event,
    lane_of,
    late_skeleton,
)
from lineage_quality.producer.secrets import (
    RedactingFilter,
    environment_secrets,
    transport_secrets,
)
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.spool import LATE, Spool, SpoolFullError
from lineage_quality.values.refs import DatasetRef


def event(run: str, n: int = 0, **extra: Any) -> str:
    body = {
        "eventType": "RUNNING",
        "eventTime": "2026-11-22T06:00:00Z",
        "producer": "p",
        "run": {"runId": run},
        "job": {"namespace": "n", "name": "j"},
        "n": n,
    }
    return json.dumps({**body, **extra})


def test_claim_keeps_each_lane_in_order_and_lets_other_lanes_pass(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    a1, a2, b1 = spool.put(event("a", 1)), spool.put(event("a", 2)), spool.put(event("b", 1))
    first = spool.claim(timeout=0)
    assert first is not None and (first.id, first.lane) == (a1, "run:a")
    second = spool.claim(timeout=0)  # lane a is held: b passes
    assert second is not None and second.id == b1
    assert spool.claim(timeout=0) is None
    spool.done(a1)
    spool.release("run:a")
    third = spool.claim(timeout=0)
    assert third is not None and third.id == a2


def test_bound_warns_at_80_percent_then_refuses(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spool = Spool(tmp_path / "s.db", Settings.of(spool_max_events=5, spool_reserve_bytes=0))
    with caplog.at_level(logging.WARNING):
        ids = [spool.put(event("a", i)) for i in range(5)]
        assert "spool is 80% full" in caplog.text
        with pytest.raises(SpoolFullError, match="spool full"):
            spool.put(event("a", 5))
    spool.done(ids[0])
    spool.put(event("a", 5))
    assert spool.usage()[0] == 5

    by_bytes = Spool(tmp_path / "b.db", Settings.of(spool_max_bytes=300, spool_reserve_bytes=0))
    by_bytes.put(event("a"))
    with pytest.raises(SpoolFullError):
        by_bytes.put(event("a", 1, pad="x" * 300))


def test_hand_over_puts_the_follow_up_after_its_event_and_holds_the_lane(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=0))
    first = spool.put(event("a"))
    item = spool.claim(timeout=0)
    assert item is not None
    late = spool.hand_over(item.id, event("a", 9), event("a", 10))
    later = spool.put(event("a", 11))  # the run goes on
    other = spool.put(event("b"))
    spool.release(item.lane)
    # the event itself is not held; its follow-up waits for the evaluation, the run behind it
    again_first = spool.claim(timeout=0)
    assert again_first is not None and again_first.id == first
    spool.done(first)
    spool.release(again_first.lane)
    nxt = spool.claim(timeout=0)
    assert nxt is not None and nxt.id == other
    assert spool.claim(timeout=0) is None
    spool.unhold(late)
    again = spool.claim(timeout=0)
    assert again is not None and (again.id, again.kind, again.lane) == (late, LATE, "run:a")

    spool.close()
    reopened = Spool(
        tmp_path / "s.db", Settings.of(spool_reserve_bytes=0)
    )  # after a restart: in lane order
    found = reopened.claim(timeout=0)
    assert found is not None and found.id == late
    reopened.done(late)
    reopened.release("run:a")
    after = reopened.claim(timeout=0)
    assert after is not None and after.id == later


def test_spools_of_the_first_release_are_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL, "
        "enriched INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0, "
        "received REAL NOT NULL)"
    )
    db.execute("INSERT INTO events (body, received) VALUES (?, 0)", (event("old"),))
    db.commit()
    db.close()
    spool = Spool(path, Settings.of(spool_reserve_bytes=0))
    item = spool.claim(timeout=0)
    assert item is not None and item.lane == "run:old" and item.kind == "event"
    assert spool.usage() == (1, len(event("old").encode()))


def test_disk_reserve_is_written_beside_the_spool(tmp_path: Path) -> None:
    Spool(tmp_path / "s.db", Settings.of(spool_reserve_bytes=8192))
    assert (tmp_path / "s.db.reserve").stat().st_size == 8192


BASE = {"eventTime": "2026-11-22T06:00:00+02:00", "producer": "p"}
JOB = {"namespace": "n", "name": "j"}
DATASET = {"namespace": "n", "name": "d", "facets": {"any": {"x": [1]}}}


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (json.loads(event("r")), "RunEvent"),
        ({**json.loads(event("r")), "eventType": None}, "RunEvent"),  # optional in the spec
        ({**BASE, "job": JOB}, "JobEvent"),
        ({**BASE, "dataset": DATASET}, "DatasetEvent"),
    ],
)
def test_valid_events_of_every_kind_pass(body: dict[str, Any], kind: str) -> None:
    assert check_event(body) == kind


def test_unknown_facets_pass_and_non_object_facets_do_not() -> None:
    body = json.loads(event("r"))
    body["run"]["facets"] = {"myCompany_thing": {"_producer": "x", "anything": [1, {"a": None}]}}
    body["inputs"] = [{"namespace": "n", "name": "d", "inputFacets": {"custom": {}}}]
    check_event(body)
    body["inputs"][0]["inputFacets"]["custom"] = "text"
    with pytest.raises(InvalidEventError, match=r"inputs\[0\].inputFacets.custom"):
        check_event(body)


def test_lanes() -> None:
    assert lane_of(json.loads(event("r1"))) == "run:r1"
    assert lane_of({"job": {"namespace": "n", "name": "j"}}) == "job:n:j"
    assert lane_of({"dataset": {"namespace": "n", "name": "d"}}) == "dataset:n:d"


def test_late_skeleton_keeps_the_run_and_only_the_late_datasets() -> None:
    body = json.loads(event("r", eventType="COMPLETE"))
    body["inputs"] = [{"namespace": "f", "name": "/a"}, {"namespace": "f", "name": "/b"}]
    body["outputs"] = [{"namespace": "f", "name": "/c", "facets": {"schema": {"fields": []}}}]
    late = [DatasetRef("inputs", 1, "f", "/b"), DatasetRef("outputs", 0, "f", "/c")]
    skeleton, mapping = late_skeleton(body, late, "OTHER")
    assert skeleton["eventType"] == "OTHER" and skeleton["run"] == body["run"]
    assert skeleton["inputs"] == [{"namespace": "f", "name": "/b"}]
    assert skeleton["outputs"] == body["outputs"]  # facets kept: same dataset version downstream
    assert mapping[late[0]] == DatasetRef("inputs", 0, "f", "/b")
    assert body["eventType"] == "COMPLETE"  # not modified
    check_event(skeleton)


def test_secrets_are_masked_in_messages_arguments_and_tracebacks() -> None:
    redact = RedactingFilter(["s3cr3t-key", "ab"])  # too short to mask
    record = logging.LogRecord(
        "x", logging.INFO, __file__, 1, "auth %s", ("Bearer s3cr3t-key",), None
    )
    assert redact.filter(record) and record.getMessage() == "auth Bearer ***"
    try:
        raise RuntimeError("token s3cr3t-key refused")
    except RuntimeError:
        import sys

        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    redact.filter(record)
    assert record.exc_text and "s3cr3t-key" not in record.exc_text and "***" in record.exc_text

    env = {
        "LINEAGE_QUALITY_API_KEY": "k1",
        "OPENLINEAGE__TRANSPORT__AUTH__API_KEY": "k2",
        "DATAHUB_GMS_TOKEN": "k3",
        "OPENLINEAGE__TRANSPORT__URL": "http://x",
        "HOME": "/root",
    }
    assert sorted(environment_secrets(env)) == ["k1", "k2", "k3"]

    from openlineage.client.transport.http import HttpConfig, HttpTransport

    transport = HttpTransport(
        HttpConfig.from_dict(
            {
                "url": "http://127.0.0.1:1",
                "auth": {"type": "api_key", "apiKey": "sink-key"},
                "custom_headers": {"X-Token": "hdr-secret"},
            }
        )
    )
    assert sorted(transport_secrets(transport)) == ["hdr-secret", "sink-key"]


@pytest.mark.parametrize("when", ["9999-12-31T23:59:59Z", "9999-12-31T23:59:59-05:00"])
def test_an_event_time_far_ahead_of_our_clock_is_refused(when: str) -> None:
    """Issue 44: a year-9999 eventTime made the history's retention expire every other dataset."""
    body = {**json.loads(event("r")), "eventTime": when}
    with pytest.raises(InvalidEventError, match="more than 24 hours ahead"):
        check_event(body)
    soon = dt.datetime.now(dt.UTC) + dt.timedelta(hours=14)  # a mislabelled time zone
    check_event({**body, "eventTime": soon.isoformat()})


def test_a_lone_surrogate_in_a_run_id_or_a_name_is_kept_as_its_escape(tmp_path: Path) -> None:
    """Review of issue 44: the lane and run ids are keys in SQLite, which cannot take a lone
    surrogate (the whole commit batch failed: every event in it got 503)."""
    from lineage_quality.producer.run_verdicts import run_ids
    from lineage_quality.producer.spool import Spool

    body = json.loads(event("r\ud800x"))
    body["run"]["facets"] = {"parent": {"run": {"runId": "p\udfff"}, "job": JOB}}
    ids = run_ids(body)
    assert ids == ["r\\ud800x", "p\\udfff"]
    assert lane_of(body) == "run:r\\ud800x"
    assert lane_of({"job": {"namespace": "n\ud83d", "name": "j"}}) == "job:n\\ud83d:j"
    spool = Spool(tmp_path / "spool.db")
    try:
        spool.put(json.dumps(body), ids, +1, lane_of(body), "COMPLETE")
        spool.mark_run_failed(ids[0])
        assert spool.run_failed(ids[0]) and spool.run_report(ids[0]) is not None
    finally:
        spool.close()


def test_a_symlinks_facet_of_any_shape_binds_nothing_and_raises_nothing() -> None:
    from lineage_quality.values.refs import table_identities, table_names

    for odd in (5, "x", {"a": 1}, None, [1, None, {"type": "TABLE"}]):
        facets = {"symlinks": {"identifiers": odd}}
        assert table_names(facets) == [] and table_identities(facets) == []

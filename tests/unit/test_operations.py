"""Operations endpoints of a real Producer (issue 10.5): /healthz and /readyz without the key,
/metrics only with it, counters that follow what happened, and JSON logs (secrets masked)."""

from __future__ import annotations

import io
import json
import logging
import sqlite3
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from openlineage.client.transport.file import FileConfig, FileTransport
from prometheus_client.parser import text_string_to_metric_families

from lineage_quality.logformat import JsonFormatter
from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.backoff import Backoff
from lineage_quality.producer.secrets import RedactingFilter
from lineage_quality.producer.settings import Settings

KEY = "s3cret-key-for-tests"
EVENT = {
    "eventType": "START",
    "eventTime": "2026-11-22T06:00:00.000Z",
    "producer": "https://example.com/p",
    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    "run": {"runId": "0190e6f0-0000-7000-8000-000000000001"},
    "job": {"namespace": "n", "name": "j"},
}


@pytest.fixture
def producer(tmp_path: Path) -> Iterator[Producer]:
    sink = FileTransport(FileConfig(log_file_path=str(tmp_path / "out.jsonl"), append=True))
    p = Producer(
        Evaluator([]),  # no rules: no Spark session is ever started
        Forwarder(sink),
        Spool(tmp_path / "spool.db", Settings.of(spool_max_events=3)),
        Settings.of(port=0, api_key=KEY, retry=Backoff(initial=0.05)),
    )
    p.start()
    yield p
    p.stop()


def call(
    url: str, path: str, body: bytes | None = None, key: str | None = KEY
) -> tuple[int, bytes, str]:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url + path, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read(), response.headers["Content-Type"]
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers["Content-Type"]


def samples(text: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text.decode()):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_health_is_open_metrics_need_the_key_and_count_what_happened(producer: Producer) -> None:
    url = producer.url
    assert call(url, "/healthz", key=None)[:2] == (200, b'{"status": "ok"}')
    status, body, _ = call(url, "/readyz", key=None)
    assert (status, json.loads(body)) == (200, {"status": "ready", "problems": []})
    assert call(url, "/metrics", key=None)[0] == 401
    assert call(url, "/metrics", key="wrong")[0] == 401

    assert call(url, "/api/v1/lineage", json.dumps(EVENT).encode())[0] == 201
    assert call(url, "/api/v1/lineage", json.dumps(EVENT).encode())[0] == 201
    assert call(url, "/api/v1/lineage", b"{not json")[0] == 400
    assert call(url, "/api/v1/lineage", json.dumps(EVENT).encode(), key=None)[0] == 401
    assert producer.spool.wait_empty(10)

    status, text, ctype = call(url, "/metrics")
    assert status == 200 and ctype.startswith("text/plain")
    got = samples(text)
    assert got[("lineage_quality_events_received_total", ())] == 2
    assert got[("lineage_quality_events_forwarded_total", ())] == 2
    assert got[("lineage_quality_events_refused_total", (("reason", "bad_request"),))] == 1
    assert got[("lineage_quality_events_refused_total", (("reason", "unauthorized"),))] == 1
    assert got[("lineage_quality_spool_events", ())] == 0
    assert got[("lineage_quality_evaluation_seconds_count", ())] == 0  # nothing was bound


def test_readyz_says_why_when_the_spool_is_full_or_locked(producer: Producer) -> None:
    producer.stop()  # nothing forwards now: the spool fills up
    for _ in range(3):
        producer.spool.put(json.dumps(EVENT))
    ok, payload = producer.health.ready()
    assert not ok and payload["problems"] == [
        f"spool full (3 events, {producer.spool.usage()[1]} bytes)"
    ]
    producer.spool.done(1)
    assert producer.health.ready()[0]
    other = sqlite3.connect(str(producer.spool.path), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the database
    try:
        ok, payload = producer.health.ready()
        assert not ok and payload["problems"][0].startswith("spool not writable")
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_json_logs_are_one_object_per_line_with_secrets_masked() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RedactingFilter([KEY]))
    logger = logging.getLogger("lineage_quality.test_json_logs")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("forwarding to %s failed", "http://x", extra={"event_id": 7})
        try:
            raise RuntimeError(f"token {KEY} refused")
        except RuntimeError:
            logger.exception("sink said no")
    finally:
        logger.removeHandler(handler)
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["level"] == "WARNING" and first["message"] == "forwarding to http://x failed"
    assert first["logger"] == "lineage_quality.test_json_logs" and first["event_id"] == 7
    assert first["time"].endswith("+00:00")
    assert second["message"] == "sink said no"
    assert "RuntimeError" in second["exc_info"] and KEY not in second["exc_info"]

"""Events with no bound rules go on JSON-equal and in order (one run), through a real
openlineage-python transport."""

from __future__ import annotations

import gzip
import http.client
import json
from pathlib import Path

from openlineage.client.transport.file import FileConfig, FileTransport

from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.settings import Settings

EVENTS = [
    {
        "eventType": et,
        "eventTime": "2026-11-22T06:00:00.000Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {
            "runId": "0190e6f0-0000-7000-8000-000000000001",
            "facets": {"custom": {"_producer": "p", "nested": {"list": [1, "two", 3.5, True]}}},
        },
        "job": {"namespace": "ns", "name": "job", "facets": {}},
        "inputs": [
            {"namespace": "file", "name": "/unbound", "facets": {"unicode": {"v": "ünï ✓"}}}
        ],
        "outputs": [],
    }
    for et in ["START", "RUNNING", "COMPLETE", "FAIL", "OTHER"]
]


def test_unbound_events_are_forwarded_unchanged_in_order(tmp_path: Path) -> None:
    sink = tmp_path / "events.jsonl"
    producer = Producer(
        Evaluator([]),  # no contracts: nothing is bound, Spark is never started
        Forwarder(FileTransport(FileConfig(log_file_path=str(sink), append=True))),
        Spool(tmp_path / "spool.db"),
        Settings.of(port=0),
    )
    producer.start()
    try:
        host, port = producer.receiver.address
        for event in EVENTS:
            conn = http.client.HTTPConnection(host, port, timeout=10)
            conn.request(
                "POST",
                "/api/v1/lineage",
                body=gzip.compress(json.dumps(event).encode()),
                headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
            )
            assert conn.getresponse().status == 201
            conn.close()
        assert producer.spool.wait_empty(timeout=30)
    finally:
        producer.stop()
    forwarded = [json.loads(line) for line in sink.read_text().splitlines()]
    assert forwarded == EVENTS

"""Forwarded events are the received JSON with only our facets inserted (issue 8.6, 9.8): nulls,
`{}` and null list items, unknown fields, unicode, big integers and number spellings such as
`1e400` and `1.0` arrive as they were sent, through a real openlineage-python transport."""

from __future__ import annotations

import http.client
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.transport.file import FileConfig, FileTransport

from lineage_quality import rawjson
from lineage_quality.contracts.binding import BoundRules, DatasetPattern
from lineage_quality.kinds import RuleKind
from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.events import now_iso
from lineage_quality.producer.settings import Settings
from lineage_quality.rawjson import JsonNumber
from lineage_quality.rules import Operator, Rule, Threshold

pytestmark = pytest.mark.spark

ROWS = Rule(id="rows", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0))

ODD = (
    '{"nulls": null, "items": [{}, {"a": 1}, null], "empty": {}, "big": 18446744073709551617,'
    ' "huge": 1e400, "one": 1.0, "neg": -0.0, "exp": 2.5E-3, "text": "ünï ✓ \\u2028 \\"q\\"",'
    ' "unknown": {"deep": [[[]]], "t": true, "f": false}}'
)


def body(event_type: str, dataset: str, run: str) -> str:
    # eventTime now: a plain-file dataset is judged on the files its run left by its COMPLETE,
    # and a fixed past time would make the data written below "later" (an ERROR, no metrics)
    return (
        '{"eventType": "' + event_type + '", "eventTime": "' + now_iso() + '",'
        ' "producer": "https://example.com/p", "schemaURL":'
        ' "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",'
        ' "run": {"runId": "' + run + '", "facets": {"odd": ' + ODD + "}},"
        ' "job": {"namespace": "ns", "name": "job", "facets": {}, "extra": null},'
        ' "inputs": [{"namespace": "file", "name": "'
        + dataset
        + '", "facets": {"odd": '
        + ODD
        + '}, "inputFacets": null}], "outputs": [], "x-unknown": [null, {}, 1e400]}'
    )


def post(producer: Producer, text: str) -> None:
    host, port = producer.receiver.address
    conn = http.client.HTTPConnection(host, port, timeout=30)
    conn.request(
        "POST", "/api/v1/lineage", body=text.encode(), headers={"Content-Type": "application/json"}
    )
    assert conn.getresponse().status == 201
    conn.close()


def test_forwarded_json_is_the_received_json_plus_our_facets(spark: Any, tmp_path: Path) -> None:
    data = tmp_path / "bound"
    spark.createDataFrame([(1,)], "id INT").write.parquet(str(data))
    sink = tmp_path / "events.jsonl"
    producer = Producer(
        Evaluator([BoundRules("c", "o", (DatasetPattern("file", str(data)),), (ROWS,))], spark),
        Forwarder(FileTransport(FileConfig(log_file_path=str(sink), append=True))),
        Spool(tmp_path / "spool.db"),
        Settings.of(port=0),
    )
    unbound = body("COMPLETE", "/not/bound", "0190e6f0-0000-7000-8000-000000000001")
    bound = body("COMPLETE", str(data), "0190e6f0-0000-7000-8000-000000000002")
    producer.start()
    try:
        post(producer, unbound)
        post(producer, bound)
        assert producer.spool.wait_empty(timeout=120)
    finally:
        producer.stop()
    first, second = sink.read_text().rstrip("\n").split("\n")  # U+2028 is not a line end
    assert first == unbound  # nothing bound: the very text received

    sent, got = rawjson.loads(bound), rawjson.loads(second)
    dataset = got["inputs"][0]
    ours = dataset.pop("inputFacets")
    assert list(ours) == ["dataQualityAssertions", "dataQualityMetrics"]
    assert [a["success"] for a in ours["dataQualityAssertions"]["assertions"]] == [True]
    metrics = ours["dataQualityMetrics"]
    assert (metrics["rowCount"], metrics["columnMetrics"]) == (JsonNumber("1"), {})  # rows only
    assert list(got["run"]["facets"].pop("test")["tests"][0]["params"]) != []
    sent["inputs"][0].pop("inputFacets")  # null before: the one place our facet went
    # Everything else equal value for value, numbers as written (JsonNumber compares text).
    assert got == sent
    assert "1e400" in second and "Infinity" not in second
    assert "18446744073709551617" in second and '"one":1.0' in second

"""The propagated `upstreamQuality` assertion in DataHub (issue 39), without Spark: serve's own
spool and workers, a real LineageKeeper, the DataHub sink writing an MCP file (the evaluator a
stand-in binding raw, as in tests/unit/test_lineage_serve.py). A failing column rule on raw
gives clean and agg (no contract) a CUSTOM assertion on their customer_id field, linked to raw's
own assertion (its URN and raw's dataset URN in `customProperties`), with a FAILURE run event per
marked run and a SUCCESS once a healthy write of raw cleared the mark. DataHub's own code checks
the file (`datahub check metadata-file`) and reads it back (`datahub lite`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")

from lite import assert_round_trip
from samples import check_metadata_file

from lineage_quality import rawjson
from lineage_quality.contracts.binding import BoundRules, pattern_from_location
from lineage_quality.datahub.file import McpFileWriter
from lineage_quality.datahub.mcps import split_key
from lineage_quality.datahub.sink import DataHubSink
from lineage_quality.datahub.urns import assertion_urn, field_urn
from lineage_quality.lineage import Upstream, open_lineage
from lineage_quality.lineage.keeper import LineageKeeper
from lineage_quality.producer import Producer, Spool
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.write_through import SinkLatency, WriteThrough

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_lineage_serve import AGG, CLEAN, NOT_NULL, Evaluator, Sink, _complete

URN = "urn:li:dataset:(urn:li:dataPlatform:file,{},PROD)"
RAW, CLEAN_URN, AGG_URN = (URN.format(p) for p in ("/lake/raw", "/lake/clean", "/lake/agg"))


def _records(path: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads(path.read_text())
    return records


class FastSink(Sink):
    """A sink the intake writes through to (its `send_once`): the COMPLETEs with no mark take
    the intake's path (kept there, never spooled), the marked ones the worker's."""

    def send_once(self, text: str, timeout: float) -> int:
        self.send(text)
        return 200


@pytest.mark.parametrize("write_through", [False, True], ids=["spooled", "written-through"])
def test_the_propagated_assertion_is_linked_to_the_upstream_one(
    tmp_path: Path, write_through: bool
) -> None:
    mcp_file = tmp_path / "mcps.json"
    binding = BoundRules("raw-contract", "raw", (pattern_from_location("/lake/raw"),), (NOT_NULL,))
    datahub = DataHubSink([McpFileWriter(mcp_file)], bindings=[binding])
    evaluator = Evaluator()
    producer = Producer(
        evaluator,  # type: ignore[arg-type]
        Sink(),  # type: ignore[arg-type]
        Spool(tmp_path / "spool.db"),
        Settings.of(port=0),
        result_sinks=[datahub],
        lineage=LineageKeeper(open_lineage(tmp_path / "history.db"), Upstream.WARN),
    )
    if write_through:
        latency = SinkLatency(1.0)
        latency.took(0.001)
        producer.intake.write_through = WriteThrough(FastSink(), latency, 0.005, 1.0)  # type: ignore[arg-type]
    producer.start()

    def send(body: str) -> None:
        producer._accept(body, rawjson.loads(body))
        assert producer.spool.wait_empty(timeout=20)

    try:
        evaluator.nulls = 3
        send(_complete("01", 0, [], "/lake/raw"))
        send(_complete("02", 1, ["/lake/raw"], "/lake/clean", CLEAN))
        send(_complete("03", 2, ["/lake/clean"], "/lake/agg", AGG))
        evaluator.nulls = 0
        send(_complete("04", 10, [], "/lake/raw"))
        send(_complete("05", 11, ["/lake/raw"], "/lake/clean", CLEAN))
        send(_complete("06", 12, ["/lake/clean"], "/lake/agg", AGG))
    finally:
        producer.stop()  # closes the sink: every MCP written
    records = _records(mcp_file)
    upstream = assertion_urn(NOT_NULL, RAW)
    infos = {
        r["entityUrn"]: r["aspect"]["json"] for r in records if r["aspectName"] == "assertionInfo"
    }
    assert upstream in infos  # raw's own assertion, the one linked to
    linked = {
        urn: info
        for urn, info in infos.items()
        if info.get("customAssertion", {}).get("type") == "upstreamQuality"
    }
    by_dataset = {info["customAssertion"]["entity"]: (urn, info) for urn, info in linked.items()}
    assert set(by_dataset) == {CLEAN_URN, AGG_URN}  # one each: on customer_id only
    agg_urn, agg = by_dataset[AGG_URN]
    assert agg["type"] == "CUSTOM"
    assert agg["customAssertion"]["field"] == field_urn(AGG_URN, "customer_id")
    assert agg["customProperties"] == {
        "upstreamAssertionUrn": upstream,
        "upstreamDatasetUrn": RAW,
        "upstreamDataset": "file:/lake/raw",
        "upstreamRule": "customer_id_not_null",
        "upstreamRun": "0190e6f0-0000-7000-8000-000000000001",
        "upstreamColumn": "customer_id",
        "via": "file:/lake/clean",
        "viaColumn": "customer_id",
        "action": "LOG",
    }
    assert upstream in agg["description"]
    runs = [
        (r["aspect"]["json"]["runId"][-2:], r["aspect"]["json"]["result"]["type"])
        for r in records
        if r["aspectName"] == "assertionRunEvent" and r["entityUrn"] == agg_urn
    ]
    assert runs == [("03", "FAILURE"), ("06", "SUCCESS")]  # marked, then cleared
    check_metadata_file(mcp_file)
    assert assert_round_trip(mcp_file, tmp_path / "lite-home") > 0


def test_dataset_keys_split_back_into_namespace_and_name() -> None:
    assert split_key("file:/lake/raw") == ("file", "/lake/raw")
    assert split_key("s3://bucket:lake/raw") == ("s3://bucket", "lake/raw")
    assert split_key("hive://host:9083:db.t") == ("hive://host:9083", "db.t")

"""The producer hands each evaluated COMPLETE event's results to its result sinks; a DataHub
sink failing never changes or stops the lineage event. No Spark: a stand-in evaluator."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")

from samples import DATASET_URN, REF, check_metadata_file, event, result, rule

from lineage_quality.datahub.build import build_sink
from lineage_quality.datahub.config import DataHubConfig
from lineage_quality.producer.enrich import enrich
from lineage_quality.producer.service import Producer
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.spool import Spool
from lineage_quality.results import RuleResult, Status
from lineage_quality.values.refs import DatasetRef

RESULTS = {REF: [result(rule("nullValues")), result(rule("rowCount"), Status.FAILED, actual=0)]}


class StubEvaluator:
    def bound(self, event: Mapping[str, Any]) -> dict[DatasetRef, list[Any]]:
        return {REF: [object()]}

    def evaluate(self, event: Mapping[str, Any]) -> dict[DatasetRef, list[RuleResult]]:
        return {k: list(v) for k, v in RESULTS.items()}


class StubForwarder:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, event: dict[str, Any]) -> None:
        self.sent.append(event)

    def close(self) -> None:
        pass


class BrokenSink:
    def emit(self, event: Mapping[str, Any], results: Mapping[DatasetRef, Sequence[Any]]) -> None:
        raise RuntimeError("DataHub exploded")

    def close(self) -> None:
        raise RuntimeError("and again")


def _producer(tmp_path: Path, sinks: list[Any]) -> Producer:
    return Producer(
        StubEvaluator(),  # type: ignore[arg-type]
        StubForwarder(),  # type: ignore[arg-type]
        Spool(tmp_path / "spool.db"),
        Settings.of(port=0),
        result_sinks=sinks,
    )


def test_complete_events_go_to_the_datahub_sink(tmp_path: Path) -> None:
    path = tmp_path / "mcps.json"
    sink = build_sink(DataHubConfig(file=str(path)))
    producer = _producer(tmp_path, [sink])
    producer.start()
    body = json.dumps(event(run_id="run-42"))
    out = producer.process(body)
    # START events are not evaluated, so nothing goes to DataHub for them.
    start = json.dumps({**event(run_id="run-42"), "eventType": "START"})
    assert producer.process(start) == start
    producer.stop()  # closes the sinks: queued MCPs are written
    assert json.loads(out) == enrich(json.loads(body), RESULTS)
    check_metadata_file(path)
    runs = [r for r in json.loads(path.read_text()) if r["aspectName"] == "assertionRunEvent"]
    assert len(runs) == 2
    assert {r["aspect"]["json"]["runId"] for r in runs} == {"run-42"}
    assert {r["aspect"]["json"]["asserteeUrn"] for r in runs} == {DATASET_URN}


def test_a_failing_sink_never_touches_the_event(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    body = json.dumps(event())
    plain = json.dumps(enrich(json.loads(body), RESULTS))
    producer = _producer(tmp_path / "b", [BrokenSink()])
    producer.start()
    assert json.loads(producer.process(body)) == json.loads(plain)
    producer.stop()
    assert "DataHub exploded" in caplog.text

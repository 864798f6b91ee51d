"""A real Producer (issue 28.1, 28.5): datasets bound by one glob are one series per rule, the
lag is observed, and the forwarded event's inputs carry dataQualityMetrics with the profile the
contract asked for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from lineage_quality.contracts import parse_odcs
from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.events import now_iso
from lineage_quality.producer.settings import Settings

pytestmark = pytest.mark.spark

CONTRACT = """\
apiVersion: v3.0.2
kind: DataContract
id: parts
version: 1.0.0
status: active
schema:
  - name: parts
    customProperties:
      - property: openlineage.namespace
        value: file
      - property: openlineage.name
        value: "{root}/part-*"
      - property: lineageQuality.profile
        value: true
    quality:
      - metric: rowCount
        mustBeGreaterThan: 0
        id: parts_rows
    properties:
      - name: id
        quality:
          - metric: nullValues
            mustBe: 0
            id: parts_id_not_null
"""


class Sink:
    def __init__(self) -> None:
        self.bodies: list[str] = []

    def emit(self, event: Any) -> None:
        self.bodies.append(event if isinstance(event, str) else json.dumps(event))

    def close(self, timeout: float = -1) -> bool:
        return True


def test_glob_bound_datasets_make_one_series_per_rule(spark: Any, tmp_path: Path) -> None:
    names = []
    for i in range(3):
        path = tmp_path / f"part-{i}"
        spark.createDataFrame([(1, 2.0), (None, 3.0)], "id INT, v DOUBLE").write.parquet(str(path))
        names.append(str(path))
    bindings = parse_odcs(CONTRACT.format(root=tmp_path), str(tmp_path / "c.yaml"))
    producer = Producer(
        Evaluator(bindings, spark=spark),
        Forwarder(Sink()),
        Spool(tmp_path / "spool.db"),
        Settings.of(port=0),
    )
    event = {
        "eventType": "COMPLETE",
        "eventTime": now_iso(),  # after the files were written: they are the run's
        "producer": "https://example.com/p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "0190e6f0-0000-7000-8000-000000000001"},
        "job": {"namespace": "n", "name": "j"},
        "inputs": [{"namespace": "file", "name": n} for n in names],
    }
    out = json.loads(producer.process(json.dumps(event)))
    for ds in out["inputs"]:
        metrics = ds["inputFacets"]["dataQualityMetrics"]
        assert metrics["rowCount"] == 2
        assert metrics["columnMetrics"] == {
            "id": {"nullCount": 1, "count": 1, "sum": 1, "min": 1, "max": 1},
            "v": {"nullCount": 0, "count": 2, "sum": 5.0, "min": 2.0, "max": 3.0},
        }
        (nn,) = [a for a in ds["inputFacets"]["dataQualityAssertions"]["assertions"]
                 if a["properties"]["ruleId"] == "parts_id_not_null"]  # fmt: skip
        assert nn["failures"] == 1
    body, _ = producer.metrics.exposition()
    series = [
        s
        for family in text_string_to_metric_families(body.decode())
        if family.name.startswith("lineage_quality_rule")
        for s in family.samples
    ]
    assert {(s.labels["dataset"], s.labels["rule"]) for s in series} == {
        ("parts", "parts_rows"),
        ("parts", "parts_id_not_null"),
        ("parts", "parts.parts.id.schema.type"),  # the property's schema rule (id exists)
    }
    assert len(series) == 3 * 6  # three datasets, one label: the contract object's name
    lag = [
        s.value
        for family in text_string_to_metric_families(body.decode())
        for s in family.samples
        if s.name == "lineage_quality_evaluation_lag_seconds_count"
    ]
    assert lag == [1.0]

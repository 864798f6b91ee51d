"""The real OpenLineage Spark listener -> the producer -> a file sink: facets on the way out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.transport.file import FileConfig, FileTransport
from pipeline import EVALUATOR_APP, producer_for, read_jsonl, submit_job

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    workdir = tmp_path_factory.mktemp("listener")
    sink = workdir / "events.jsonl"
    transport = FileTransport(FileConfig(log_file_path=str(sink), append=True))
    with producer_for(spark, transport, workdir) as producer:
        raw, clean = submit_job(producer, workdir, "e2e-file")
        received = list(producer.spool.received)  # type: ignore[attr-defined]
    return {"raw": raw, "clean": clean, "out": read_jsonl(sink), "in": received}


def _by_name(assertions: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {a["name"]: a for a in assertions}


def _complete_with(events: list[dict[str, Any]], raw: Path, clean: Path) -> dict[str, Any]:
    for e in events:
        if (
            e["eventType"] == "COMPLETE"
            and any(d["name"] == str(raw) for d in e.get("inputs", []))
            and any(d["name"] == str(clean) for d in e.get("outputs", []))
        ):
            return e
    raise AssertionError("no COMPLETE event reading raw and writing clean")


def test_complete_event_carries_input_and_output_assertions(run: dict[str, Any]) -> None:
    event = _complete_with(run["out"], run["raw"], run["clean"])
    (inp,) = [d for d in event["inputs"] if d["name"] == str(run["raw"])]
    (out,) = [d for d in event["outputs"] if d["name"] == str(run["clean"])]

    raw_facet = inp["inputFacets"]["dataQualityAssertions"]
    assert raw_facet["_schemaURL"].startswith(
        "https://openlineage.io/spec/facets/1-1-0/DataQualityAssertionsDatasetFacet.json"
    )
    raw = _by_name(raw_facet["assertions"])
    assert raw["raw_row_count"]["success"] is True and raw["raw_row_count"]["actual"] == "5"
    assert raw["raw_id_not_null"]["success"] is False
    assert raw["raw_id_not_null"] | {"params": None, "properties": None} == {
        "assertion": "not_null", "success": False, "column": "id", "severity": "error",
        "name": "raw_id_not_null", "expected": "== 0", "actual": "1", "params": None,
        "failures": 1, "properties": None,
    }  # fmt: skip
    assert raw["raw_id_not_null"]["params"]["failures"] == 1
    properties = raw["raw_id_not_null"]["properties"]  # seed 001's tool-specific settings
    assert properties["metric"] == "nullValues" and properties["action"] == "BLOCK"
    assert "dataQualityAssertions" not in inp.get("facets", {})

    clean = _by_name(out["facets"]["dataQualityAssertions"]["assertions"])
    assert clean["clean_id_not_null"]["success"] is True
    assert clean["clean_id_unique"]["success"] is False
    assert clean["clean_id_unique"]["actual"] == "1"
    assert clean["clean_status_accepted"]["success"] is True
    missing = clean["clean_missing_column"]
    assert missing["success"] is False and missing["params"]["status"] == "ERROR"
    assert "no_such_column" in missing["params"]["error"]

    tests = event["run"]["facets"]["test"]["tests"]
    assert len(tests) == len(raw) + len(clean)


def test_every_event_is_forwarded_and_unbound_ones_unchanged(run: dict[str, Any]) -> None:
    received = [json.loads(b) for b in run["in"]]
    forwarded = run["out"]
    assert len(forwarded) == len(received) > 0
    bound = {str(run["raw"]), str(run["clean"])}
    enriched = 0
    # The producer keeps each run's order; different runs may pass each other.
    pairs = [
        pair
        for run_id in dict.fromkeys(e["run"]["runId"] for e in received)
        for pair in zip(
            [e for e in received if e["run"]["runId"] == run_id],
            [e for e in forwarded if e["run"]["runId"] == run_id],
            strict=True,
        )
    ]
    for before, after in pairs:
        names = {d["name"] for d in before.get("inputs", []) + before.get("outputs", [])}
        if before["eventType"] == "COMPLETE" and names & bound:
            enriched += 1
            assert "test" in after["run"]["facets"]
            assert after["job"] == before["job"] and after["eventTime"] == before["eventTime"]
        else:
            assert after == before  # JSON-equal: no field lost or changed
    assert enriched >= 2  # the raw write and the raw -> clean job


def test_evaluation_queries_never_appear_as_lineage_jobs(run: dict[str, Any]) -> None:
    jobs = {e["job"]["name"] for e in run["out"]}
    assert all(name.startswith("e2e_clean_job") for name in jobs), jobs
    assert not any(EVALUATOR_APP.replace("-", "_") in name for name in jobs)

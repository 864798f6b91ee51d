"""The real listener -> the producer -> a real Marquez; read back through Marquez's REST API:
each dataset's assertions (passing and failing), the run's `test` facet and the lineage graph."""

from __future__ import annotations

import urllib.parse
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from marquez_server import MarquezHandle
from openlineage.client.transport.http import HttpConfig, HttpTransport
from pipeline import producer_for, submit_job

pytestmark = [pytest.mark.e2e, pytest.mark.marquez]

NAMESPACE = "e2e-marquez"
CLEAN_JOB = "e2e_clean_job.execute_insert_into_hadoop_fs_relation_command.e2e-data_clean"
RAW_JOB = "e2e_clean_job.execute_insert_into_hadoop_fs_relation_command.e2e-data_raw"

# What the contracts in tests/e2e/contracts say of the job's data (tests/e2e/jobs/clean_job.py):
# raw has 5 rows, one null id; clean has ids 1, 3, 3 and a rule on a column that does not exist.
RAW_VERDICTS = {"raw_row_count": True, "id_exists": True, "raw_id_not_null": False}
CLEAN_VERDICTS = {
    "id_exists": True,
    "status_exists": True,
    "no_such_column_exists": False,
    "clean_id_not_null": True,
    "clean_id_unique": False,
    "clean_status_accepted": True,
    "clean_missing_column": False,
}


def _quote(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def _assertions(marquez: MarquezHandle, name: Path) -> list[dict[str, Any]]:
    dataset = marquez.get_json(f"/api/v1/namespaces/file/datasets/{_quote(str(name))}")
    assertions: list[dict[str, Any]] = dataset["facets"]["dataQualityAssertions"]["assertions"]
    return assertions


def _verdicts(assertions: list[dict[str, Any]]) -> dict[str, bool]:
    names = Counter(a["name"] for a in assertions)
    assert all(n == 1 for n in names.values()), f"an assertion repeats: {names}"
    return {a["name"]: a["success"] for a in assertions}


def _latest_run_facets(marquez: MarquezHandle, job: str) -> dict[str, Any]:
    found = marquez.get_json(f"/api/v1/namespaces/{NAMESPACE}/jobs/{_quote(job)}")
    run_id = found["latestRun"]["id"]
    facets: dict[str, Any] = marquez.get_json(f"/api/v1/jobs/runs/{run_id}/facets?type=run")[
        "facets"
    ]
    return facets


def test_marquez_stores_assertions_test_facet_and_lineage(
    marquez: MarquezHandle, spark: Any, tmp_path: Any
) -> None:
    transport = HttpTransport(HttpConfig.from_dict({"type": "http", "url": marquez.url}))
    with producer_for(spark, transport, tmp_path) as producer:
        raw, clean = submit_job(producer, tmp_path, NAMESPACE)

    # Each dataset: exactly the contract's rules, passing and failing as the data says.
    clean_assertions = _assertions(marquez, clean)
    raw_assertions = _assertions(marquez, raw)
    assert _verdicts(clean_assertions) == CLEAN_VERDICTS
    assert _verdicts(raw_assertions) == RAW_VERDICTS
    assert Counter(a["success"] for a in clean_assertions) == {True: 4, False: 3}
    assert Counter(a["success"] for a in raw_assertions) == {True: 2, False: 1}
    by_name = {a["name"]: a for a in clean_assertions}
    assert by_name["clean_id_unique"]["actual"] == "1"
    assert by_name["clean_missing_column"]["params"]["status"] == "ERROR"
    assert {a["name"]: a["actual"] for a in raw_assertions}["raw_row_count"] == "5"

    # The run that wrote clean read raw: its `test` facet lists both datasets' assertions.
    tests = _latest_run_facets(marquez, CLEAN_JOB)["test"]["tests"]
    by_dataset: dict[str, dict[str, str]] = {}
    for t in tests:
        by_dataset.setdefault(t["params"]["dataset"], {})[t["name"]] = t["status"]
    assert by_dataset == {
        f"file:{clean}": {k: "pass" if v else "fail" for k, v in CLEAN_VERDICTS.items()},
        f"file:{raw}": {k: "pass" if v else "fail" for k, v in RAW_VERDICTS.items()},
    }
    # The run that only wrote raw carries raw's assertions alone.
    raw_tests = _latest_run_facets(marquez, RAW_JOB)["test"]["tests"]
    assert {t["params"]["dataset"] for t in raw_tests} == {f"file:{raw}"}

    # Lineage as Marquez draws it: raw -> clean job -> clean, and the raw-writing job before raw.
    node = f"dataset:file:{clean}"
    graph = marquez.get_json(f"/api/v1/lineage?nodeId={_quote(node)}")["graph"]
    edges = {(e["origin"], e["destination"]) for n in graph for e in n["inEdges"] + n["outEdges"]}
    clean_job, raw_job = f"job:{NAMESPACE}:{CLEAN_JOB}", f"job:{NAMESPACE}:{RAW_JOB}"
    assert edges == {
        (raw_job, f"dataset:file:{raw}"),
        (f"dataset:file:{raw}", clean_job),
        (clean_job, node),
    }
    # Only the job's own Spark actions are jobs: the evaluation's queries never show up.
    jobs = marquez.get_json(f"/api/v1/namespaces/{NAMESPACE}/jobs")["jobs"]
    assert {j["name"] for j in jobs} == {
        "e2e_clean_job",
        "e2e_clean_job.map_partitions_parallel_collection",
        RAW_JOB,
        CLEAN_JOB,
    }

"""Structured Streaming judged micro-batch by micro-batch (issue 51.3), real queries under
spark-submit: a file source (one file of 10, 20, 30 rows per batch) into a Parquet file sink, a
Delta sink and a foreachBatch, with `attach` in the job and the real OpenLineage listener.

What the listener 1.53 sends: a COMPLETE per batch of the foreachBatch (its write) and of the
Delta sink (a write named after its plan, without a version facet), nothing for the file sink.
In-driver, the file and Delta sinks' batches are judged on the files each added, every batch
covered exactly once (merged when evaluation fell behind)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pipeline import REPO_ROOT, read_jsonl

from lineage_quality.evaluation.session import table_format_jars
from lineage_quality.sparksubmit import spark_submit_path, submit_env

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent / "streaming"


@pytest.fixture(scope="module")
def stream(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    workdir = tmp_path_factory.mktemp("stream")
    events, batches = workdir / "events.jsonl", workdir / "batches.json"
    delta = [str(j) for j in table_format_jars() if "delta" in j.name]
    cmd = [
        spark_submit_path(),
        "--master", "local[2]",
        "--driver-memory", "1g",
        "--conf", "spark.ui.enabled=false",
        "--jars", ",".join(delta),
        str(HERE / "job.py"),
        str(HERE / "stream.yaml"), str(workdir), str(events), str(workdir / "spool.db"),
        str(batches),
    ]  # fmt: skip
    done = subprocess.run(
        cmd, cwd=REPO_ROOT, env=submit_env(), capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {
        "base": workdir / "stream",
        "events": read_jsonl(events),
        "batches": json.loads(batches.read_text()),
    }


def _judged(stream: dict[str, Any], sink: str) -> list[tuple[str, dict[str, Any]]]:
    """(job name, assertions by name) of each COMPLETE writing `sink`."""
    out = []
    for event in stream["events"]:
        for dataset in event.get("outputs", []):
            facet = (dataset.get("facets") or {}).get("dataQualityAssertions")
            if event["eventType"] == "COMPLETE" and dataset["name"] == str(stream["base"] / sink):
                assert facet is not None, dataset
                out.append((event["job"]["name"], {a["name"]: a for a in facet["assertions"]}))
    return out


@pytest.mark.parametrize(
    ("sink", "rule"),
    [
        # In-driver file sinks are judged on Spark 3.5 only for now: on Spark 4.1 no batch of
        # the file sink is judged (docs/evaluation.md, "Structured Streaming": a known gap)
        pytest.param("file_sink", "file_rows", marks=pytest.mark.spark35_only),
        ("delta_sink", "delta_rows"),
    ],
)
def test_each_micro_batch_is_judged_on_its_own_rows(
    stream: dict[str, Any], sink: str, rule: str
) -> None:
    ran = {int(b): rows for b, rows in stream["batches"][sink].items()}
    assert sorted(ran.values()) == [10, 20, 30], stream["batches"]  # one batch per file
    judged = [(j, a) for j, a in _judged(stream, sink) if j == f"{sink}.micro_batches"]
    covered: list[int] = []
    for _, assertions in judged:
        params = assertions[rule]["params"]
        ids = params["batches"]
        covered += ids
        # the batches' own rows: exactly what the query's progress says they read
        assert params["status"] == "PASSED", params
        assert int(assertions[rule]["actual"]) == sum(ran[b] for b in ids), (ids, ran)
        assert "micro-batch" in params["scope"]
        assert all(a["params"]["batches"] == ids for a in assertions.values())
    # every batch that wrote rows is judged, once: none skipped, none twice
    assert sorted(covered) == sorted(ran)


def test_what_the_listener_reports_of_streaming_queries(stream: dict[str, Any]) -> None:
    """Its foreachBatch and Delta sink batches come as writes (one COMPLETE per batch, judged
    as writes of the dataset, without `params.batches`); a file sink's batches do not come."""
    for sink, rule in (("each_sink", "each_rows"), ("delta_sink", "delta_rows")):
        writes = [a for j, a in _judged(stream, sink) if not j.endswith(".micro_batches")]
        assert len(writes) >= 3, sink
        assert all("batches" not in a[rule]["params"] for a in writes)
    assert all(j.endswith(".micro_batches") for j, _ in _judged(stream, "file_sink"))

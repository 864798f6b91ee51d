"""End to end: the demo job under spark-submit with the real OpenLineage listener, the producer
with a DataHub sink (local stand-in GMS + MCP file): assertions on both datasets, named as
DataHub's OpenLineage endpoint names them, accepted by `datahub check metadata-file`."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")

from fake_gms import decode, fake_gms
from openlineage.client.transport.file import FileConfig, FileTransport
from samples import check_metadata_file

from lineage_quality.contracts import load_contracts
from lineage_quality.datahub.build import build_sink
from lineage_quality.datahub.config import DataHubConfig
from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.settings import Settings
from lineage_quality.sparksubmit import listener_args, listener_jar, spark_submit

pytestmark = [pytest.mark.e2e, pytest.mark.spark]


def test_demo_job_assertions_reach_datahub(repo_root: Path, tmp_path: Path) -> None:
    listener_jar(repo_root)  # the line's listener jar: make jars SPARK=...
    out = tmp_path / "demo-output"  # the demo contracts bind */demo-output/data/orders_clean
    (out / "data").mkdir(parents=True)
    raw = repo_root / "examples" / "demo" / "data" / "orders_raw"
    clean = out / "data" / "orders_clean"
    bindings = load_contracts([repo_root / "examples" / "demo" / "contracts"])
    transport = FileTransport(FileConfig(log_file_path=str(out / "events.jsonl"), append=True))
    with fake_gms() as gms:
        sink = build_sink(DataHubConfig(gms_url=gms.url, file=str(out / "mcps.json")), bindings)
        producer = Producer(
            Evaluator(bindings),
            Forwarder(transport),
            Spool(out / "spool.db"),
            Settings.of(port=0),
            result_sinks=[sink],
        )
        producer.start()
        try:
            result = spark_submit(
                [
                    *listener_args(repo_root, producer.url),
                    str(repo_root / "examples" / "demo" / "pipeline.py"),
                    str(raw),
                    str(clean),
                ],
                cwd=repo_root,
                log_file=out / "spark-submit.log",
            )
            assert result.returncode == 0, (out / "spark-submit.log").read_text()[-3000:]
            assert producer.spool.wait_empty(timeout=300)
        finally:
            producer.stop()
        received = [m for p in gms.posts() for m in decode(p)]

    check_metadata_file(out / "mcps.json")
    records = json.loads((out / "mcps.json").read_text())
    runs = [r["aspect"]["json"] for r in records if r["aspectName"] == "assertionRunEvent"]
    assertees = Counter(r["asserteeUrn"] for r in runs)
    assert set(assertees) == {
        f"urn:li:dataset:(urn:li:dataPlatform:file,{raw},PROD)",
        f"urn:li:dataset:(urn:li:dataPlatform:file,{clean},PROD)",
    }
    assert len({r["runId"] for r in runs}) == 1
    types = Counter(r["result"]["type"] for r in runs)
    assert types["SUCCESS"] and types["FAILURE"]  # the demo data breaks rules on purpose
    # The stand-in GMS got the same MCPs (plus the platform's name).
    got = Counter((m.entityUrn, m.aspectName) for m in received)
    assert got == Counter((r["entityUrn"], r["aspectName"]) for r in records)

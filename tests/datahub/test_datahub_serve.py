"""Issue 40 end to end: a job under spark-submit with the real OpenLineage listener writes the
every-kind dataset; the producer (`serve`'s, with a DataHub file output built by the outputs
factory) evaluates every rule of the ODCS, JSON-rules and SHACL test contracts on it; each
assertion has the native type of test_datahub_native.py's table and the run-event result of
test_datahub_check.py's (the same data), each contract its dataContract; DataHub's check
accepts the file, and `datahub lite` (DataHub's local store) imports it and reads it back equal.
History rules have no history on a first run: INSUFFICIENT_DATA errors; the reconciliation
names an input the job did not read: INVALID_PARAMETERS."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")

from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.schema_classes import AssertionInfoClass
from lite import assert_round_trip
from openlineage.client.transport.file import FileConfig, FileTransport
from samples import check_metadata_file
from test_datahub_check import RESULTS
from test_datahub_native import CONTRACTS, NAME, TABLE, summary

from lineage_quality.contracts import load_contracts
from lineage_quality.contracts.shacl import ShaclOptions
from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.outputs.factory import build_outputs
from lineage_quality.producer.settings import OutputSpec, Settings
from lineage_quality.sparksubmit import listener_args, listener_jar, spark_submit

pytestmark = [pytest.mark.e2e, pytest.mark.spark]


def _contracts(into: Path, data: Path) -> Path:
    """The test contracts, bound to `data` instead of /data/warehouse/every_kind."""
    into.mkdir()
    for source in CONTRACTS.iterdir():
        (into / source.name).write_text(source.read_text().replace(NAME, str(data)))
    return into


def test_serve_sends_every_rule_to_datahub(repo_root: Path, tmp_path: Path) -> None:
    listener_jar(repo_root)
    data = tmp_path / "warehouse" / "every_kind"
    bindings = load_contracts(
        [_contracts(tmp_path / "contracts", data)], shacl=ShaclOptions(create_assertions=True)
    )
    out = tmp_path / "mcps.json"
    settings = Settings.of(
        port=0,
        spool=tmp_path / "spool.db",
        outputs=(OutputSpec("datahub-file", {"path": str(out)}),),
    )
    outputs = build_outputs(settings, bindings)
    transport = FileTransport(FileConfig(log_file_path=str(tmp_path / "events.jsonl")))
    producer = Producer(
        Evaluator(bindings),
        Forwarder(transport),
        Spool(settings.spool.path),
        settings,
        result_sinks=list(outputs.result_sinks),
    )
    producer.start()
    try:
        job = Path(__file__).parent / "jobs" / "every_kind_job.py"
        done = spark_submit(
            [*listener_args(repo_root, producer.url), str(job), str(data)],
            cwd=repo_root,
            log_file=tmp_path / "spark-submit.log",
        )
        assert done.returncode == 0, (tmp_path / "spark-submit.log").read_text()[-3000:]
        assert producer.spool.wait_empty(timeout=300)
    finally:
        producer.stop()
    check_metadata_file(out)
    assert assert_round_trip(out, tmp_path / "lite") > 100  # DataHub's local store reads it back
    records = json.loads(out.read_text())
    dataset = f"urn:li:dataset:(urn:li:dataPlatform:file,{data},PROD)"
    infos: dict[str, AssertionInfoClass] = {}
    got: dict[tuple[str, str], tuple[str, str]] = {}
    errors: dict[str, set[str]] = {}  # error type -> the rules that had it
    for r in records:
        aspect = MetadataChangeProposalWrapper.from_obj(copy.deepcopy(r)).aspect
        if isinstance(aspect, AssertionInfoClass):
            infos[r["entityUrn"]] = aspect
    for r in records:
        if r["aspectName"] != "assertionRunEvent":
            continue
        ev: dict[str, Any] = r["aspect"]["json"]
        assert ev["asserteeUrn"] == dataset
        props = infos[r["entityUrn"]].customProperties
        got.setdefault((props["contract"], props["ruleId"]), (
            summary(infos[r["entityUrn"]]), ev["result"]["type"]))  # fmt: skip
        if ev["result"]["type"] == "ERROR":
            errors.setdefault(ev["result"]["error"]["type"], set()).add(props["ruleId"])
    assert got == {k: (TABLE[k][0], RESULTS[k]) for k in got}
    assert len(got) >= 30
    assert {i.customProperties["kind"] for i in infos.values()} >= {
        "rowCount", "nullValues", "missingValues", "invalidValues", "duplicateValues",
        "valueRange", "lengthRange", "cardinality", "dateFormat", "statistic", "freshness",
        "sql", "columnType", "extraColumns",
    }  # fmt: skip
    # history rules have no history yet; the reconciliation names an input the job did not read
    assert set(errors) == {"INSUFFICIENT_DATA", "INVALID_PARAMETERS"}
    assert errors["INVALID_PARAMETERS"] == {"every_order_kept"}
    contracts = [r for r in records if r["aspectName"] == "dataContractProperties"]
    assert len(contracts) == 3 and {c["aspect"]["json"]["entity"] for c in contracts} == {dataset}

"""Issue 40: `lineage-quality check --datahub-file` on real data (Spark): every rule of the test
contracts (ODCS, JSON rules, SHACL; contracts/every_kind/) reaches DataHub as the assertion
test_datahub_native.py's table names, with the run-event result the data gives (the table
below), through the same outputs factory as `serve`; the file passes `datahub check
metadata-file`. History rules are not judged by `check`: their run events are errors of type
INSUFFICIENT_DATA, never a pass."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")

from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.schema_classes import AssertionInfoClass
from samples import check_metadata_file
from test_datahub_native import CONTRACTS, TABLE, summary

from lineage_quality.cli import main
from lineage_quality.kinds import RuleKind

pytestmark = pytest.mark.spark

ROWS = [
    # order_id, customer_id, status, amount, day, tags
    (1, 10, "pending", 20.0, "2025-01-01", ["a"]),
    (2, 11, "shipped", 30.0, "2025-01-02", ["a", "b"]),
    (3, 12, "lost", None, "2025/01/03", ["a", "b", "c", "d"]),
]

# (contract, rule id) -> the run event's result on ROWS
RESULTS = {
    # JSON rules: `lost` is no accepted status, `2025/01/03` matches the regex but not the format
    ("orders", "schema_order_id"): "SUCCESS",
    ("orders", "not_null_order_id"): "SUCCESS",
    ("orders", "unique_order_id"): "SUCCESS",
    ("orders", "schema_customer_id"): "SUCCESS",
    ("orders", "schema_status"): "SUCCESS",
    ("orders", "enum_status"): "FAILURE",
    ("orders", "max_length_status"): "SUCCESS",
    ("orders", "schema_amount"): "SUCCESS",
    ("orders", "range_amount"): "SUCCESS",
    ("orders", "schema_day"): "SUCCESS",
    ("orders", "regex_day"): "FAILURE",
    ("orders", "date_format_day"): "FAILURE",
    ("orders", "schema_updated_at"): "SUCCESS",
    ("orders", "schema_tags"): "SUCCESS",
    ("orders", "rows_change"): "ERROR",  # history: not judged by check
    ("orders", "schema_extra_columns"): "SUCCESS",
    # SHACL: four tags is more than three
    ("orders", "every_kind_order_id_not_null"): "SUCCESS",
    ("orders", "every_kind_status_min_length"): "SUCCESS",
    ("orders", "every_kind_status_max_length"): "SUCCESS",
    ("orders", "every_kind_status_pattern"): "SUCCESS",
    ("orders", "every_kind_amount_min_inclusive"): "SUCCESS",
    ("orders", "every_kind_amount_max_inclusive"): "SUCCESS",
    ("orders", "every_kind_tags_min_count"): "SUCCESS",
    ("orders", "every_kind_tags_cardinality"): "FAILURE",
    # ODCS: one status of three is not accepted (2 tolerated); a third of the amounts is null
    ("every-kind-odcs", "rows"): "SUCCESS",
    ("every-kind-odcs", "rows_vs_previous"): "ERROR",
    ("every-kind-odcs", "rows_usual"): "ERROR",
    ("every-kind-odcs", "order_customer_unique"): "SUCCESS",
    ("every-kind-odcs", "no_negative_amounts"): "SUCCESS",
    ("every-kind-odcs", "every_order_kept"): "ERROR",  # a reconciliation: no run in check
    ("every-kind-odcs", "every-kind-odcs.orders.order_id.schema.type"): "SUCCESS",
    ("every-kind-odcs", "every-kind-odcs.orders.order_id.schema.required"): "SUCCESS",
    ("every-kind-odcs", "every-kind-odcs.orders.order_id.schema.unique"): "SUCCESS",
    ("every-kind-odcs", "order_id_not_null"): "SUCCESS",
    ("every-kind-odcs", "every-kind-odcs.orders.customer_id.schema.type"): "SUCCESS",
    ("every-kind-odcs", "every-kind-odcs.orders.status.schema.type"): "SUCCESS",
    ("every-kind-odcs", "status_accepted"): "SUCCESS",
    ("every-kind-odcs", "status_present"): "SUCCESS",
    ("every-kind-odcs", "every-kind-odcs.orders.amount.schema.type"): "SUCCESS",
    ("every-kind-odcs", "amount_mostly_present"): "FAILURE",
    ("every-kind-odcs", "amount_avg"): "SUCCESS",
    ("every-kind-odcs", "amount_sum"): "SUCCESS",
    ("every-kind-odcs", "amount_count"): "SUCCESS",  # 2 non-null amounts
    ("every-kind-odcs", "amount_below_25"): "FAILURE",  # 30.0 is not
    ("every-kind-odcs", "amount_nulls_usual"): "ERROR",
    ("every-kind-odcs", "every-kind-odcs.orders.day.schema.type"): "SUCCESS",
    ("every-kind-odcs", "day_pattern"): "FAILURE",
    ("every-kind-odcs", "every-kind-odcs.orders.updated_at.schema.type"): "SUCCESS",
    ("every-kind-odcs", "updated_recently"): "SUCCESS",
    ("every-kind-odcs", "every-kind-odcs.orders.tags.schema.type"): "SUCCESS",
}


@pytest.fixture(scope="module")
def data(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("check") / "every_kind"
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    rows = [(*row[:5], now, row[5]) for row in ROWS]
    spark.createDataFrame(  # type: ignore[attr-defined]
        rows,
        "order_id BIGINT, customer_id BIGINT, status STRING, amount DOUBLE, day STRING, "
        "updated_at TIMESTAMP, tags ARRAY<STRING>",
    ).write.parquet(str(path))
    return path


def _check(contract: Path, data: Path, out: Path, *extra: str) -> int:
    return main(
        [
            "check",
            "--contract", str(contract),
            "--dataset", str(data),
            "--datahub-file", str(out),
            "--marquez-web-url", "http://marquez:3000",
            *extra,
        ]
    )  # fmt: skip


def test_check_sends_every_rule_to_datahub(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "mcps.json"
    codes = [
        _check(CONTRACTS / "orders.yaml", data, out),
        _check(CONTRACTS / "orders.json", data, out),
        _check(CONTRACTS / "orders.ttl", data, out, "--shacl-assertions"),
    ]
    assert codes == [1, 1, 1]  # each contract has a failing rule; publishing changes no verdict
    check_metadata_file(out)
    records = json.loads(out.read_text())
    dataset = f"urn:li:dataset:(urn:li:dataPlatform:file,{data},PROD)"
    infos: dict[str, Any] = {}
    runs: dict[str, list[Any]] = {}
    for r in records:
        if r["aspectName"] == "assertionInfo":
            aspect = MetadataChangeProposalWrapper.from_obj(copy.deepcopy(r)).aspect
            assert isinstance(aspect, AssertionInfoClass)
            infos[r["entityUrn"]] = aspect
        if r["aspectName"] == "assertionRunEvent":
            runs.setdefault(r["entityUrn"], []).append(r["aspect"]["json"])
    got: dict[tuple[str, str], tuple[str, str]] = {}
    for urn, events in runs.items():
        info = infos[urn]
        props = info.customProperties
        for ev in events:
            assert ev["asserteeUrn"] == dataset
            assert ev["result"]["externalUrl"].startswith("http://marquez:3000/lineage/dataset/")
            key = (props["contract"], props["ruleId"])
            if key in got:
                continue
            got[key] = (summary(info), ev["result"]["type"])
            if ev["result"]["type"] == "ERROR":  # history rules, in check
                assert ev["result"]["error"]["type"] == "INSUFFICIENT_DATA"
    # rules checking the same thing share one assertion (and its last writer's rule id)
    expected = {k: (TABLE[k][0], RESULTS[k]) for k in got}
    assert got == expected
    assert len(got) >= 30
    kinds = {i.customProperties["kind"] for i in infos.values()}
    assert kinds == {k.value for k in RuleKind}  # every rule kind
    assert set(RESULTS) == set(TABLE)

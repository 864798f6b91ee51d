"""Rule -> assertionInfo, RuleResult -> assertionRunEvent, for every RuleKind. Issue 40: every
assertion has DataHub's native type (VOLUME, FRESHNESS, DATA_SCHEMA, FIELD, SQL) or CUSTOM, never
the deprecated DATASET; the table of what each rule becomes is tests/datahub/test_datahub_native.py;
the CUSTOM shapes (`mapping.shape`) are pinned here."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")

from datahub.emitter.mcp import MetadataChangeProposalWrapper
from samples import DATASET_URN, KIND_SAMPLES, REF, event, result, rule

from lineage_quality.datahub.assertion_info import assertion_info
from lineage_quality.datahub.mcps import event_mcps, event_millis
from lineage_quality.datahub.run_events import run_event
from lineage_quality.datahub.urns import assertion_urn
from lineage_quality.kinds import RuleKind
from lineage_quality.kinds.datahub_mapping import shape
from lineage_quality.results import Status
from lineage_quality.rules import Operator, Threshold, Unit
from lineage_quality.values.refs import DatasetRef

ALL_KINDS = list(RuleKind)


def _roundtrip(urn: str, aspect: object) -> MetadataChangeProposalWrapper:
    mcp = MetadataChangeProposalWrapper(entityUrn=urn, aspect=aspect)  # type: ignore[arg-type]
    assert mcp.validate()
    back = MetadataChangeProposalWrapper.from_obj(json.loads(json.dumps(mcp.to_obj())))
    assert isinstance(back, MetadataChangeProposalWrapper)
    assert back.validate()
    assert back.aspect == mcp.aspect
    return back


def test_every_rule_kind_has_a_sample() -> None:
    assert sorted(KIND_SAMPLES) == sorted(k.value for k in RuleKind)
    assert all(rule(k).kind is k for k in RuleKind)  # each sample is a valid rule


# The assertion type each kind declares for its sample rule (`Kind.datahub_type`); the test
# below checks that the mapping makes that type of it.
SAMPLE_TYPES = {k.value: k.datahub_type for k in RuleKind}
_SUB_ASPECT = {
    "VOLUME": "volumeAssertion",
    "FRESHNESS": "freshnessAssertion",
    "DATA_SCHEMA": "schemaAssertion",
    "FIELD": "fieldAssertion",
    "SQL": "sqlAssertion",
    "CUSTOM": "customAssertion",
}


@pytest.mark.parametrize("kind", ALL_KINDS, ids=lambda k: k.value)
def test_every_kind_becomes_a_valid_native_or_custom_assertion(kind: RuleKind) -> None:
    r = rule(kind, severity="error", name=f"{kind.value}_rule", description="why it matters")
    info = assertion_info(r, DATASET_URN, contract="orders-contract")
    urn = assertion_urn(r, DATASET_URN)
    _roundtrip(urn, info)
    assert info.type == SAMPLE_TYPES[kind.value]
    assert info.datasetAssertion is None  # the deprecated DATASET type is never sent
    for aspect_type, field in _SUB_ASPECT.items():
        sub = getattr(info, field)
        assert (sub is not None) == (aspect_type == info.type), field
        if sub is not None:
            assert sub.entity == DATASET_URN
    if info.type == "CUSTOM":
        custom = info.customAssertion
        assert custom is not None
        assert custom.scope in ("DATASET_COLUMN", "DATASET_ROWS", "DATASET_SCHEMA")
        assert custom.nativeType == kind.value
        assert custom.nativeParameters is not None
        assert custom.nativeParameters["metric"] == kind.value
        assert custom.logic
        if r.columns:
            assert custom.fields == [f"urn:li:schemaField:({DATASET_URN},{c})" for c in r.columns]
        else:
            assert custom.fields is None
    assert info.customProperties["contract"] == "orders-contract"
    assert info.customProperties["ruleId"] == r.id
    assert info.customProperties["origin"] == "odcs"
    assert info.customProperties["kind"] == kind.value
    assert info.source is not None and info.source.type == "EXTERNAL"
    assert info.description is not None and info.description.startswith("why it matters (")
    # A run event for each status, the dataset (never a field) as assertee.
    for status in Status:
        res = result(r, status, actual=None if status in (Status.ERROR, Status.SKIPPED) else 0)
        ev = run_event(res, urn, DATASET_URN, "run-1", 1_700_000_000_000)
        back = _roundtrip(urn, ev)
        assert back.aspect is not None
        assert ev.asserteeUrn == DATASET_URN


def _shape_of(r: object) -> tuple[str, str, str, str | None, str | None, str | None]:
    """The structured fields a CUSTOM assertion of `r` carries (`mapping.shape`)."""
    s = shape(r)  # type: ignore[arg-type]
    return (
        s.scope,
        s.aggregation,
        s.operator,
        s.value.value if s.value else None,
        s.min_value.value if s.min_value else None,
        s.max_value.value if s.max_value else None,
    )


@pytest.mark.parametrize(
    ("r", "expected"),
    [
        (rule("nullValues"), ("DATASET_COLUMN", "NULL_COUNT", "EQUAL_TO", "0", None, None)),
        (
            rule("nullValues", threshold=Threshold(Operator.LESS_THAN, 5), unit=Unit.PERCENT),
            ("DATASET_COLUMN", "NULL_PROPORTION", "LESS_THAN", "0.05", None, None),
        ),
        (
            rule("missingValues", missing_values=None),
            ("DATASET_COLUMN", "NULL_COUNT", "EQUAL_TO", "0", None, None),
        ),
        (rule("missingValues"), ("DATASET_COLUMN", "_NATIVE_", "EQUAL_TO", "0", None, None)),
        (rule("rowCount"), ("DATASET_ROWS", "ROW_COUNT", "BETWEEN", None, "1", "1000")),
        (
            rule("rowCount", threshold=Threshold(Operator.GREATER_THAN, 0)),
            ("DATASET_ROWS", "ROW_COUNT", "GREATER_THAN", "0", None, None),
        ),
        (
            rule("invalidValues"),
            ("DATASET_COLUMN", "IDENTITY", "IN", '["pending", "shipped"]', None, None),
        ),
        (
            rule("invalidValues", valid_values=None, pattern="^[a-z]+$"),
            ("DATASET_COLUMN", "IDENTITY", "REGEX_MATCH", "^[a-z]+$", None, None),
        ),
        (
            rule("invalidValues", threshold=Threshold(Operator.LESS_OR_EQUAL, 3)),
            ("DATASET_COLUMN", "_NATIVE_", "LESS_THAN_OR_EQUAL_TO", "3", None, None),
        ),
        (rule("valueRange"), ("DATASET_COLUMN", "IDENTITY", "BETWEEN", None, "0", "100")),
        (
            rule("valueRange", max_value=None),
            ("DATASET_COLUMN", "IDENTITY", "GREATER_THAN_OR_EQUAL_TO", "0", None, None),
        ),
        (
            rule("valueRange", threshold=Threshold(Operator.LESS_THAN, 2), unit=Unit.PERCENT),
            ("DATASET_COLUMN", "_NATIVE_", "LESS_THAN", "2", None, None),
        ),
        (rule("lengthRange"), ("DATASET_COLUMN", "_NATIVE_", "BETWEEN", None, "1", "20")),
        (rule("duplicateValues"), ("DATASET_COLUMN", "_NATIVE_", "EQUAL_TO", "0", None, None)),
        (rule("statistic"), ("DATASET_COLUMN", "MEAN", "GREATER_THAN", "0", None, None)),
        (
            rule("statistic", statistic="max", threshold=Threshold(Operator.BETWEEN, 1, 2.5)),
            ("DATASET_COLUMN", "MAX", "BETWEEN", None, "1", "2.5"),
        ),
        (
            rule("statistic", threshold=Threshold(Operator.MUST_NOT_BE, 0)),
            ("DATASET_COLUMN", "MEAN", "NOT_EQUAL_TO", "0", None, None),
        ),
        (
            rule("rowCount", threshold=Threshold(Operator.NOT_BETWEEN, 1, 9)),
            ("DATASET_ROWS", "ROW_COUNT", "_NATIVE_", None, "1", "9"),
        ),
        (rule("sql"), ("DATASET_ROWS", "_NATIVE_", "EQUAL_TO", "0", None, None)),
        (rule("columnType"), ("DATASET_SCHEMA", "_NATIVE_", "EQUAL_TO", "double", None, None)),
        (
            rule("columnType", expected_type=None),
            ("DATASET_SCHEMA", "COLUMNS", "CONTAIN", "amount", None, None),
        ),
        (
            rule("extraColumns"),
            ("DATASET_SCHEMA", "COLUMNS", "IN", '["order_id", "status", "amount"]', None, None),
        ),
    ],
    ids=lambda x: getattr(x, "id", None) or "",
)
def test_standard_shapes(r: object, expected: tuple[str, ...]) -> None:
    assert _shape_of(r) == expected


def test_native_parameters_carry_the_rule_and_its_threshold() -> None:
    r = rule("invalidValues", threshold=Threshold(Operator.LESS_THAN, 5), unit=Unit.PERCENT)
    info = assertion_info(r, DATASET_URN)
    assert info.type == "CUSTOM"  # `< 5 %` is no whole-percent FIELD_VALUES fail threshold
    ds = info.customAssertion
    assert ds is not None
    assert ds.nativeParameters == {
        "metric": "invalidValues",
        "unit": "percent",
        "validValues": '["pending", "shipped"]',
        "action": "ALERT",
        "origin": "odcs",
        "ruleId": "orders.invalidValues",
        "mustBeLessThan": "5",
    }
    assert info.customProperties["threshold"] == "mustBeLessThan 5"
    sql = assertion_info(rule("sql"), DATASET_URN).sqlAssertion
    assert sql is not None and sql.statement == "SELECT COUNT(*) FROM orders WHERE amount < 0"


def test_run_event_results() -> None:
    nulls = rule("nullValues", threshold=Threshold(Operator.LESS_THAN, 5), unit=Unit.PERCENT)
    urn = assertion_urn(nulls, DATASET_URN)
    failed = run_event(
        result(nulls, Status.FAILED, actual=20.0, failing_rows=2, row_count=10),
        urn,
        DATASET_URN,
        "run-1",
        1,
    ).result
    assert failed is not None
    assert failed.type == "FAILURE"
    assert (failed.rowCount, failed.missingCount, failed.unexpectedCount) == (10, 2, None)
    # FIELD_METRIC NULL_PERCENTAGE is in percent (the CUSTOM NULL_PROPORTION was a fraction)
    assert failed.actualAggValue == pytest.approx(20.0)
    assert failed.nativeResults is not None
    assert failed.nativeResults["actual"] == "20%"
    assert failed.nativeResults["expected"] == "< 5%"

    accepted = rule("invalidValues")  # per-value form: the count goes to unexpectedCount
    passed = run_event(
        result(accepted, Status.PASSED, actual=0, row_count=7),
        assertion_urn(accepted, DATASET_URN),
        DATASET_URN,
        "run-1",
        1,
    ).result
    assert passed is not None
    assert (passed.type, passed.unexpectedCount, passed.actualAggValue) == ("SUCCESS", 0, None)

    mean = rule("statistic")
    stat = run_event(
        result(mean, Status.PASSED, actual=12.5),
        assertion_urn(mean, DATASET_URN),
        DATASET_URN,
        "r",
        1,
    ).result
    assert stat is not None and stat.actualAggValue == 12.5 and stat.unexpectedCount is None


def test_error_and_skipped_are_errors_never_passes() -> None:
    r = rule("nullValues")
    urn = assertion_urn(r, DATASET_URN)
    err = run_event(
        result(
            r, Status.ERROR, actual=None, message="column order_id not found", code="FIELD_MISSING"
        ),
        urn,
        DATASET_URN,
        "run-1",
        1,
    ).result
    assert err is not None and err.type == "ERROR"
    assert err.error is not None and err.error.properties is not None
    assert err.error.properties["message"] == "column order_id not found"
    assert err.error.properties["code"] == "FIELD_MISSING"
    skipped = run_event(
        result(r, Status.SKIPPED, actual=None, skip_reason="orders.columnType failed"),
        urn,
        DATASET_URN,
        "run-1",
        1,
    ).result
    assert skipped is not None and skipped.type == "ERROR"
    assert skipped.nativeResults is not None
    assert skipped.nativeResults["status"] == "SKIPPED"
    assert skipped.nativeResults["skipReason"] == "orders.columnType failed"


def test_event_mcps_use_run_id_event_time_and_dataset_as_assertee() -> None:
    rules = [rule("nullValues"), rule("rowCount")]
    ev = event(run_id="run-abc", event_time="2025-03-04T05:06:07.123456789Z")
    mcps = event_mcps(ev, {REF: [result(r) for r in rules]})
    aspects = [m.aspectName for m in mcps]
    assert aspects == [
        "assertionInfo",
        "dataPlatformInstance",
        "assertionActions",
        "status",
        "assertionRunEvent",
    ] * 2
    for m in mcps:
        assert m.validate()
        if m.aspectName == "dataPlatformInstance":
            assert m.aspect.platform == "urn:li:dataPlatform:lineage-quality"  # type: ignore[union-attr]
        if m.aspectName == "assertionRunEvent":
            run = m.aspect
            assert run.runId == "run-abc"  # type: ignore[union-attr]
            assert run.asserteeUrn == DATASET_URN  # type: ignore[union-attr]
            assert run.status == "COMPLETE"  # type: ignore[union-attr]
            assert run.timestampMillis == 1741064767123  # type: ignore[union-attr]
            assert run.messageId == "run-abc:outputs"  # type: ignore[union-attr]
            assert run.runtimeContext["openlineage.job"] == "spark/orders_job"  # type: ignore[union-attr,index]
    assert event_millis({"eventTime": "2025-03-04T05:06:07+01:00"}) == 1741061167000


def test_a_dataset_read_and_written_keeps_both_evaluations() -> None:
    r = rule("nullValues")
    ev = event(run_id="run-1")
    ev["inputs"] = [dict(ev["outputs"][0])]
    src = DatasetRef("inputs", 0, REF.namespace, REF.name)
    mcps = event_mcps(ev, {src: [result(r)], REF: [result(r, Status.FAILED, actual=1)]})
    runs = [m.aspect for m in mcps if m.aspectName == "assertionRunEvent"]
    assert len({m.entityUrn for m in mcps}) == 1  # one assertion (same rule, same dataset)
    assert [r.messageId for r in runs] == ["run-1:inputs", "run-1:outputs"]  # type: ignore[union-attr]
    assert [m.aspectName for m in mcps].count("assertionInfo") == 1


def test_docs_table_lists_every_rule_kind(repo_root: object) -> None:
    from pathlib import Path

    text = (Path(str(repo_root)) / "docs" / "datahub.md").read_text()
    rows = set(re.findall(r"^\| `(\w+)`", text, flags=re.MULTILINE))
    missing = {k.value for k in RuleKind} - rows
    assert not missing, f"docs/datahub.md has no mapping row for {sorted(missing)}"


def test_a_reconciliation_names_its_input_by_urn_in_the_run_context() -> None:
    from lineage_quality.datahub.mcps import event_mcps
    from lineage_quality.results import RuleResult, Status

    ev = event()
    ev["inputs"] = [{"namespace": "file", "name": "/data/warehouse/raw_orders"}]
    r = rule(RuleKind.RECONCILE)
    compared = (("input", "file:/data/warehouse/raw_orders"), ("inputValue", 10),
                ("outputValue", 8))  # fmt: skip
    failed = RuleResult(rule=r, status=Status.FAILED, actual=-2, compared=compared)
    (run,) = [m.aspect for m in event_mcps(ev, {REF: [failed]})
              if type(m.aspect).__name__ == "AssertionRunEventClass"]  # fmt: skip
    assert run.runtimeContext["reconcile.inputUrn"] == (
        "urn:li:dataset:(urn:li:dataPlatform:file,/data/warehouse/raw_orders,PROD)"
    )
    assert run.result.nativeResults["reconcile.inputValue"] == "10"

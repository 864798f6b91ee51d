"""Issue 40, DataHub to the letter: every rule of the test contracts (ODCS, JSON rules, SHACL in
contracts/every_kind/) becomes the assertion of the table below: its native type (VOLUME,
FRESHNESS, DATA_SCHEMA, FIELD, SQL, else CUSTOM), sub-type, operator and parameters, and its
run events carry the measurement where the table says. Built with DataHub's own classes, checked
by `datahub check metadata-file`, imported into DataHub's local store (`datahub lite import`) and
read back equal (`datahub lite get`). Then the lifecycle: a changed threshold supersedes its
assertion (`status.removed`), a BLOCK rule raises and resolves incidents (`assertionActions`),
errors say their cause, results link to Marquez, the assertions' platform instance, the dataset
version as the batch. No Spark here (test_datahub_check.py runs `check` on real data)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")

import attrs
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.schema_classes import (
    AssertionInfoClass,
    AssertionRunEventClass,
    DataContractPropertiesClass,
)
from lite import assert_round_trip
from samples import check_metadata_file, event, result

from lineage_quality.contracts import BoundRules, load_contracts
from lineage_quality.contracts.shacl import ShaclOptions
from lineage_quality.datahub.config import AssertionOptions, DataHubConfig
from lineage_quality.datahub.file import McpFileWriter
from lineage_quality.datahub.mcps import event_mcps, platform_mcp
from lineage_quality.datahub.sink import DataHubSink
from lineage_quality.datahub.urns import assertion_urn
from lineage_quality.kinds import RuleKind
from lineage_quality.results import Cause, RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.refs import DatasetRef

CONTRACTS = Path(__file__).parent / "contracts" / "every_kind"
NS, NAME = "file", "/data/warehouse/every_kind"
REF = DatasetRef("outputs", 0, NS, NAME)
DATASET = "urn:li:dataset:(urn:li:dataPlatform:file,/data/warehouse/every_kind,PROD)"

# (contract, rule id) -> (what DataHub gets, where a run event carries the measurement: `agg`
# actualAggValue, `unexpected` unexpectedCount, `missing` missingCount, `none`)
TABLE: dict[tuple[str, str], tuple[str, str]] = {
    # schema-rules JSON (orders.json; its contract is named by the file)
    ("orders", "schema_order_id"): (
        "DATA_SCHEMA SUPERSET order_id:integer/NUMBER",
        "none",
    ),
    ("orders", "not_null_order_id"): (
        "FIELD FIELD_VALUES order_id NOT_NULL fail>COUNT 0 excludeNulls=False",
        "missing",
    ),
    ("orders", "unique_order_id"): (
        "FIELD FIELD_METRIC order_id UNIQUE_PERCENTAGE EQUAL_TO 100",
        "unexpected",
    ),
    ("orders", "schema_customer_id"): (
        "DATA_SCHEMA SUPERSET customer_id:integer/NUMBER",
        "none",
    ),
    ("orders", "schema_status"): (
        "DATA_SCHEMA SUPERSET status:string/STRING",
        "none",
    ),
    ("orders", "enum_status"): (
        'FIELD FIELD_VALUES status IN ["pending", "shipped", "cancelled"] fail>COUNT 0 '
        "excludeNulls=True",
        "unexpected",
    ),
    ("orders", "max_length_status"): (
        "FIELD FIELD_VALUES status LENGTH LESS_THAN_OR_EQUAL_TO 10 fail>COUNT 0 excludeNulls=True",
        "unexpected",
    ),
    ("orders", "schema_amount"): (
        "DATA_SCHEMA SUPERSET amount:float/NUMBER",
        "none",
    ),
    ("orders", "range_amount"): (
        "FIELD FIELD_VALUES amount BETWEEN [0, 1000] fail>COUNT 0 excludeNulls=True",
        "unexpected",
    ),
    ("orders", "schema_day"): (
        "DATA_SCHEMA SUPERSET day:string/STRING",
        "none",
    ),
    ("orders", "regex_day"): (
        "FIELD FIELD_VALUES day REGEX_MATCH ^[0-9-]+$ fail>COUNT 0 excludeNulls=True",
        "unexpected",
    ),
    ("orders", "date_format_day"): (
        "CUSTOM dateFormat DATASET_COLUMN _NATIVE_ EQUAL_TO 0",
        "agg+unexpected",
    ),
    ("orders", "schema_updated_at"): (
        "DATA_SCHEMA SUPERSET updated_at:datetime/TIME",
        "none",
    ),
    ("orders", "schema_tags"): (
        "DATA_SCHEMA SUPERSET tags:/UNKNOWN",
        "none",
    ),
    ("orders", "rows_change"): (
        "VOLUME ROW_COUNT_CHANGE ABSOLUTE BETWEEN [-100, 100]",
        "agg",
    ),
    ("orders", "schema_extra_columns"): (
        "DATA_SCHEMA SUBSET order_id:/UNKNOWN, customer_id:/UNKNOWN, status:/UNKNOWN, "
        "amount:/UNKNOWN, day:/UNKNOWN, updated_at:/UNKNOWN, tags:/UNKNOWN",
        "none",
    ),
    # SHACL (orders.ttl)
    # seed 000: minCount 1 + maxCount 1 is FIELD_METRIC NOT_NULL: the null count is 0
    ("orders", "every_kind_order_id_not_null"): (
        "FIELD FIELD_METRIC order_id NULL_COUNT EQUAL_TO 0",
        "agg+missing",
    ),
    ("orders", "every_kind_status_min_length"): (
        "FIELD FIELD_VALUES status LENGTH GREATER_THAN_OR_EQUAL_TO 1 fail>COUNT 0 "
        "excludeNulls=True",
        "unexpected",
    ),
    ("orders", "every_kind_status_max_length"): (
        "FIELD FIELD_VALUES status LENGTH LESS_THAN_OR_EQUAL_TO 10 fail>COUNT 0 excludeNulls=True",
        "unexpected",
    ),
    ("orders", "every_kind_status_pattern"): (
        "FIELD FIELD_VALUES status REGEX_MATCH ^[a-z]+$ fail>COUNT 0 excludeNulls=True",
        "unexpected",
    ),
    # seed 000: minInclusive / maxInclusive are FIELD_METRIC (MIN, MAX)
    ("orders", "every_kind_amount_min_inclusive"): (
        "FIELD FIELD_METRIC amount MIN GREATER_THAN_OR_EQUAL_TO 0",
        "unexpected",
    ),
    ("orders", "every_kind_amount_max_inclusive"): (
        "FIELD FIELD_METRIC amount MAX LESS_THAN_OR_EQUAL_TO 1000",
        "unexpected",
    ),
    ("orders", "every_kind_tags_min_count"): (
        "CUSTOM cardinality DATASET_COLUMN _NATIVE_ GREATER_THAN_OR_EQUAL_TO 1",
        "unexpected",
    ),
    ("orders", "every_kind_tags_cardinality"): (
        "CUSTOM cardinality DATASET_COLUMN _NATIVE_ BETWEEN [1, 3]",
        "unexpected",
    ),
    # ODCS (orders.yaml)
    ("every-kind-odcs", "rows"): (
        "VOLUME ROW_COUNT_TOTAL BETWEEN [1, 1000]",
        "agg",
    ),
    ("every-kind-odcs", "rows_vs_previous"): (
        "VOLUME ROW_COUNT_CHANGE PERCENTAGE BETWEEN [-20, 25]",
        "agg",
    ),
    ("every-kind-odcs", "rows_usual"): (
        "CUSTOM rowCount stddev DATASET_ROWS ROW_COUNT _NATIVE_",
        "agg",
    ),
    ("every-kind-odcs", "order_customer_unique"): (
        "CUSTOM duplicateValues DATASET_COLUMN _NATIVE_ EQUAL_TO 0",
        "agg+unexpected",
    ),
    ("every-kind-odcs", "no_negative_amounts"): (
        "SQL METRIC EQUAL_TO 0",
        "agg",
    ),
    ("every-kind-odcs", "every_order_kept"): (
        "CUSTOM reconcile DATASET_ROWS _NATIVE_ EQUAL_TO 0",
        "agg",
    ),
    ("every-kind-odcs", "every-kind-odcs.orders.order_id.schema.type"): (
        "DATA_SCHEMA SUPERSET order_id:integer/NUMBER",
        "none",
    ),
    ("every-kind-odcs", "every-kind-odcs.orders.order_id.schema.required"): (
        "FIELD FIELD_VALUES order_id NOT_NULL fail>COUNT 0 excludeNulls=False",
        "missing",
    ),
    ("every-kind-odcs", "every-kind-odcs.orders.order_id.schema.unique"): (
        "FIELD FIELD_METRIC order_id UNIQUE_PERCENTAGE EQUAL_TO 100",
        "unexpected",
    ),
    ("every-kind-odcs", "order_id_not_null"): (
        "FIELD FIELD_VALUES order_id NOT_NULL fail>COUNT 0 excludeNulls=False",
        "missing",
    ),
    ("every-kind-odcs", "every-kind-odcs.orders.customer_id.schema.type"): (
        "DATA_SCHEMA SUPERSET customer_id:integer/NUMBER",
        "none",
    ),
    ("every-kind-odcs", "every-kind-odcs.orders.status.schema.type"): (
        "DATA_SCHEMA SUPERSET status:string/STRING",
        "none",
    ),
    ("every-kind-odcs", "status_accepted"): (
        'FIELD FIELD_VALUES status IN ["pending", "shipped", "cancelled"] fail>COUNT 2 '
        "excludeNulls=True",
        "unexpected",
    ),
    ("every-kind-odcs", "status_present"): (
        "CUSTOM missingValues DATASET_COLUMN _NATIVE_ EQUAL_TO 0",
        "agg+missing",
    ),
    ("every-kind-odcs", "every-kind-odcs.orders.amount.schema.type"): (
        "DATA_SCHEMA SUPERSET amount:number/NUMBER",
        "none",
    ),
    ("every-kind-odcs", "amount_mostly_present"): (
        "FIELD FIELD_METRIC amount NULL_PERCENTAGE LESS_THAN 5",
        "agg+missing",
    ),
    ("every-kind-odcs", "amount_avg"): (
        "FIELD FIELD_METRIC amount MEAN BETWEEN [10, 100]",
        "agg",
    ),
    ("every-kind-odcs", "amount_sum"): (
        "CUSTOM statistic DATASET_COLUMN SUM GREATER_THAN 0",
        "agg",
    ),
    ("every-kind-odcs", "amount_count"): (
        "CUSTOM count DATASET_COLUMN _NATIVE_ GREATER_THAN 0",
        "agg",
    ),
    ("every-kind-odcs", "amount_below_25"): (
        "CUSTOM valueCheck DATASET_COLUMN IDENTITY LESS_THAN 25",
        "unexpected",
    ),
    ("every-kind-odcs", "amount_nulls_usual"): (
        "CUSTOM nullValues stddev DATASET_COLUMN NULL_COUNT _NATIVE_",
        "agg+missing",
    ),
    ("every-kind-odcs", "every-kind-odcs.orders.day.schema.type"): (
        "DATA_SCHEMA SUPERSET day:string/STRING",
        "none",
    ),
    ("every-kind-odcs", "day_pattern"): (
        "FIELD FIELD_VALUES day REGEX_MATCH ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ fail>COUNT 0 "
        "excludeNulls=True",
        "unexpected",
    ),
    ("every-kind-odcs", "every-kind-odcs.orders.updated_at.schema.type"): (
        "DATA_SCHEMA SUPERSET updated_at:timestamp/TIME",
        "none",
    ),
    ("every-kind-odcs", "updated_recently"): (
        "FRESHNESS DATASET_CHANGE FIXED_INTERVAL 315360000 SECOND",
        "unexpected",
    ),
    ("every-kind-odcs", "every-kind-odcs.orders.tags.schema.type"): (
        "DATA_SCHEMA SUPERSET tags:array/ARRAY",
        "none",
    ),
}

# History rules' descriptions say what they compare.
HISTORY_DESCRIPTIONS = {
    "rows_vs_previous": "dataset: rowCount ratio to the previous run between 0.8 and 1.25",
    "rows_usual": "dataset: rowCount within 3 sd of the last 7 runs (from 7 earlier runs)",
    "amount_nulls_usual": "amount: nullValues within 3 sd of the last 7 runs (from 7 earlier runs)",
    "rows_change": "rows_change: dataset: rowCount change from the previous run between -100 and "
    "100",
}


def _p(params: Any) -> str:
    if params is None:
        return ""
    if params.value is not None:
        return " " + params.value.value
    if params.minValue is not None:
        return f" [{params.minValue.value}, {params.maxValue.value}]"
    return ""


def summary(info: AssertionInfoClass) -> str:
    """An assertionInfo in one line: type, sub-type, field, operator, parameters."""
    if info.type == "VOLUME":
        v = info.volumeAssertion
        assert v is not None
        if v.rowCountTotal:
            return f"VOLUME {v.type} {v.rowCountTotal.operator}{_p(v.rowCountTotal.parameters)}"
        c = v.rowCountChange
        assert c is not None
        return f"VOLUME {v.type} {c.type} {c.operator}{_p(c.parameters)}"
    if info.type == "FRESHNESS":
        f = info.freshnessAssertion
        assert f is not None and f.schedule.fixedInterval is not None
        interval = f.schedule.fixedInterval
        return f"FRESHNESS {f.type} {f.schedule.type} {interval.multiple} {interval.unit}"
    if info.type == "DATA_SCHEMA":
        s = info.schemaAssertion
        assert s is not None
        fields = ", ".join(
            f"{f.fieldPath}:{f.nativeDataType}/{_standard(f.type.type)}" for f in s.schema.fields
        )
        return f"DATA_SCHEMA {s.compatibility} {fields}"
    if info.type == "FIELD":
        f = info.fieldAssertion
        assert f is not None
        if f.fieldValuesAssertion is not None:
            v = f.fieldValuesAssertion
            tr = f" {v.transform.type}" if v.transform else ""
            fail = v.failThreshold
            return (
                f"FIELD {f.type} {v.field.path}{tr} {v.operator}{_p(v.parameters)} "
                f"fail>{fail.type} {fail.value} excludeNulls={v.excludeNulls}"
            )
        m = f.fieldMetricAssertion
        assert m is not None
        return f"FIELD {f.type} {m.field.path} {m.metric} {m.operator}{_p(m.parameters)}"
    if info.type == "SQL":
        q = info.sqlAssertion
        assert q is not None
        change = f" {q.changeType}" if q.changeType else ""
        return f"SQL {q.type}{change} {q.operator}{_p(q.parameters)}"
    c = info.customAssertion
    assert info.type == "CUSTOM" and c is not None
    return f"CUSTOM {c.type} {c.scope} {c.aggregation} {c.operator}{_p(c.parameters)}"


def _standard(data_type: object) -> str:
    names = {
        "NumberTypeClass": "NUMBER",
        "StringTypeClass": "STRING",
        "TimeTypeClass": "TIME",
        "ArrayTypeClass": "ARRAY",
        "NullTypeClass": "UNKNOWN",
    }
    return names[type(data_type).__name__]


def _bindings() -> list[BoundRules]:
    return load_contracts([CONTRACTS], shacl=ShaclOptions(create_assertions=True))


def _rules() -> list[tuple[str, Rule]]:
    return [(b.contract, r) for b in _bindings() for r in b.rules]


def _failed(r: Rule) -> RuleResult:
    """A FAILED result measuring 2 (2 offending rows where the kind counts rows)."""
    return result(r, Status.FAILED, actual=2, failing_rows=2 if r.kind.counts_rows else None)


def _carrier(run: AssertionRunEventClass) -> str:
    res = run.result
    assert res is not None
    found = [
        name
        for name, value in (
            ("agg", res.actualAggValue),
            ("missing", res.missingCount),
            ("unexpected", res.unexpectedCount),
        )
        if value is not None
    ]
    return "+".join(found) or "none"


def test_the_table_names_every_rule_of_the_test_contracts_and_every_kind() -> None:
    keys = [(c, r.id) for c, r in _rules()]
    assert sorted(keys) == sorted(TABLE)
    assert {r.kind.value for _, r in _rules()} == {k.value for k in RuleKind}
    types = {v[0].split()[0] for v in TABLE.values()}
    assert types == {"VOLUME", "FRESHNESS", "DATA_SCHEMA", "FIELD", "SQL", "CUSTOM"}


@pytest.fixture(scope="module")
def mcps() -> list[MetadataChangeProposalWrapper]:
    """What a DataHub sink sends for one event evaluating every rule (FAILED, measuring 2),
    bindings known: the contracts' definitions and dataContracts, then the run events."""
    sink = DataHubSink([], bindings=_bindings())
    try:
        ev = event(run_id="run-1", namespace=NS, name=NAME)
        return sink.mcps(ev, {REF: [_failed(r) for _, r in _rules()]})
    finally:
        sink.close()


def test_every_rule_gets_its_native_type_operator_and_parameters(
    mcps: list[MetadataChangeProposalWrapper],
) -> None:
    infos = {m.entityUrn: m.aspect for m in mcps if isinstance(m.aspect, AssertionInfoClass)}
    runs = {m.entityUrn: m.aspect for m in mcps if isinstance(m.aspect, AssertionRunEventClass)}
    for contract, r in _rules():
        urn = assertion_urn(r, DATASET)
        info, run = infos[urn], runs[urn]
        assert isinstance(info, AssertionInfoClass) and isinstance(run, AssertionRunEventClass)
        expected, carrier = TABLE[(contract, r.id)]
        assert (summary(info), _carrier(run)) == (expected, carrier), r.id
        assert info.datasetAssertion is None  # never the deprecated DATASET type
        # rules that check the same thing on the same dataset share one assertion (urns.py)
        sharing = {(c, o.id) for c, o in _rules() if assertion_urn(o, DATASET) == urn}
        props = info.customProperties
        assert (props["contract"], props["ruleId"]) in sharing
        assert run.result is not None and run.result.type == "FAILURE"
        assert run.asserteeUrn == DATASET and run.assertionUrn == urn
        if r.id in HISTORY_DESCRIPTIONS:
            assert info.description == HISTORY_DESCRIPTIONS[r.id]
    relative = next(r for _, r in _rules() if r.id == "rows_vs_previous")
    growth = runs[assertion_urn(relative, DATASET)]
    assert isinstance(growth, AssertionRunEventClass) and growth.result is not None
    assert growth.result.actualAggValue == 100.0  # a ratio of 2 is DataHub's +100 percent


def test_one_data_contract_per_contract_and_dataset(
    mcps: list[MetadataChangeProposalWrapper],
) -> None:
    contracts = [m for m in mcps if isinstance(m.aspect, DataContractPropertiesClass)]
    bindings = _bindings()
    assert len(contracts) == len(bindings) == 3  # ODCS, JSON rules, SHACL: one object each
    infos = {m.entityUrn: m.aspect for m in mcps if isinstance(m.aspect, AssertionInfoClass)}
    found = []
    for m in contracts:
        props = m.aspect
        assert isinstance(props, DataContractPropertiesClass) and props.entity == DATASET
        schema = [c.assertion for c in props.schema or []]
        freshness = [c.assertion for c in props.freshness or []]
        quality = [c.assertion for c in props.dataQuality or []]
        assert {infos[u].type for u in schema} <= {"DATA_SCHEMA"}  # type: ignore[union-attr]
        assert {infos[u].type for u in freshness} <= {"FRESHNESS"}  # type: ignore[union-attr]
        assert not {infos[u].type for u in quality} & {"DATA_SCHEMA", "FRESHNESS"}  # type: ignore[union-attr]
        found.append(set(schema + freshness + quality))
        assert {a.aspectName for a in mcps if a.entityUrn == m.entityUrn} == {
            "dataContractProperties",
            "status",
            "dataContractStatus",
        }
    expected = [{assertion_urn(r, DATASET) for r in b.rules} for b in bindings]
    assert sorted(map(sorted, found)) == sorted(map(sorted, expected))
    odcs = next(f for f in found if any(  # the ODCS contract has one of each category
        infos[u].type == "FRESHNESS" for u in f))  # type: ignore[union-attr]  # fmt: skip
    assert {infos[u].type for u in odcs} == {  # type: ignore[union-attr]
        "VOLUME", "FRESHNESS", "DATA_SCHEMA", "FIELD", "SQL", "CUSTOM"
    }  # fmt: skip


def test_datahubs_check_and_local_store_read_the_mcps_back_equal(
    mcps: list[MetadataChangeProposalWrapper], tmp_path: Path
) -> None:
    for m in mcps:
        assert m.validate()
    path = tmp_path / "mcps.json"
    McpFileWriter(path).write([platform_mcp(), *mcps])
    assert f"{len(mcps) + 1} MCEs found - all valid" in check_metadata_file(path)
    compared = assert_round_trip(path, tmp_path / "home")
    assert compared == len({(m.entityUrn, m.aspectName) for m in mcps
                            if m.aspectName != "assertionRunEvent"}) + 1  # fmt: skip


def _emit_twice(tmp_path: Path, first: Sequence[Rule], second: Sequence[Rule]) -> list[Any]:
    """Two runs of two producer lifetimes (the state file between them) -> the MCP records."""
    path = tmp_path / "mcps.json"
    state = str(tmp_path / "state.json")
    for run, rules, status in (("run-1", first, Status.FAILED), ("run-2", second, Status.PASSED)):
        config = DataHubConfig(file=str(path), assertions=AssertionOptions(state=state))
        sink = DataHubSink.from_config(config)
        ev = event(run_id=run, event_time=f"2025-01-0{run[-1]}T00:00:00Z", namespace=NS, name=NAME)
        sink.emit(ev, {REF: [result(r, status, actual=0 if status is Status.PASSED else 5)
                             for r in rules]})  # fmt: skip
        sink.close()
        assert (sink.failed, sink.dropped) == (0, 0)
    check_metadata_file(path)
    records: list[Any] = json.loads(path.read_text())
    return records


def test_a_changed_threshold_supersedes_its_assertion(tmp_path: Path) -> None:
    rows = next(r for _, r in _rules() if r.id == "rows")
    changed = attrs.evolve(rows, threshold=Threshold(Operator.BETWEEN, 1, 500))
    old, new = assertion_urn(rows, DATASET), assertion_urn(changed, DATASET)
    assert old != new
    records = _emit_twice(tmp_path, [rows], [changed])
    statuses = [(r["entityUrn"], r["aspect"]["json"]["removed"])
                for r in records if r["aspectName"] == "status"]  # fmt: skip
    assert statuses == [(old, False), (new, False), (old, True)]
    # the same rule again: nothing superseded
    again = _emit_twice(tmp_path / "again", [rows], [rows])
    assert [r["aspect"]["json"]["removed"] for r in again if r["aspectName"] == "status"] == [
        False,
        False,
    ]


def test_a_block_failure_raises_and_a_pass_resolves_an_incident(tmp_path: Path) -> None:
    blocking = next(r for _, r in _rules() if r.id == "order_id_not_null")  # severity error
    assert blocking.effective_action.value == "BLOCK"
    logged = attrs.evolve(
        blocking, id="logged", action="LOG", threshold=Threshold(Operator.LESS_OR_EQUAL, 3)
    )
    records = _emit_twice(tmp_path, [blocking, logged], [blocking, logged])
    urn = assertion_urn(blocking, DATASET)
    actions = [r["aspect"]["json"] for r in records
               if r["aspectName"] == "assertionActions" and r["entityUrn"] == urn]  # fmt: skip
    assert (
        actions
        == [
            {"onSuccess": [{"type": "RESOLVE_INCIDENT"}], "onFailure": [{"type": "RAISE_INCIDENT"}]}
        ]
        * 2
    )
    results = [r["aspect"]["json"]["result"]["type"] for r in records
               if r["aspectName"] == "assertionRunEvent" and r["entityUrn"] == urn]  # fmt: skip
    assert results == ["FAILURE", "SUCCESS"]  # raised, then resolved
    quiet = [r["aspect"]["json"] for r in records if r["aspectName"] == "assertionActions"
             and r["entityUrn"] == assertion_urn(logged, DATASET)]  # fmt: skip
    assert quiet == [{"onSuccess": [], "onFailure": []}] * 2
    # configurable: ALERT rules raise incidents too, or none do
    cfg = DataHubConfig.from_options(file="x.json", incidents="BLOCK,alert")
    assert cfg.assertions.incident_actions == {"BLOCK", "ALERT"}
    assert DataHubConfig.from_options(file="x.json", incidents="none").assertions == (
        AssertionOptions(incident_actions=frozenset())
    )


@pytest.mark.parametrize(
    ("status", "cause", "kind", "error_type"),
    [
        (Status.SKIPPED, Cause.INSUFFICIENT_HISTORY, "rowCount", "INSUFFICIENT_DATA"),
        (Status.ERROR, Cause.INVALID_RULE, "nullValues", "INVALID_PARAMETERS"),
        (Status.ERROR, Cause.QUERY_FAILED, "sql", "SOURCE_QUERY_FAILED"),
        (Status.ERROR, Cause.UNREADABLE, "rowCount", "SOURCE_CONNECTION_ERROR"),
        (Status.ERROR, None, "rowCount", "UNKNOWN_ERROR"),
        (Status.SKIPPED, None, "nullValues", "UNKNOWN_ERROR"),  # a failed dependency
    ],
)
def test_errors_say_their_cause(
    status: Status, cause: Cause | None, kind: str, error_type: str
) -> None:
    r = next(r for _, r in _rules() if r.kind.value == kind)
    res = RuleResult(rule=r, status=status, message="why", skip_reason="x", cause=cause)
    out = event_mcps(event(namespace=NS, name=NAME), {REF: [res]})
    run = next(m.aspect for m in out if isinstance(m.aspect, AssertionRunEventClass))
    assert run.result is not None and run.result.type == "ERROR"  # never a pass
    assert run.result.error is not None and run.result.error.type == error_type


def test_external_url_platform_instance_and_dataset_version() -> None:
    r = next(r for _, r in _rules() if r.id == "rows")
    ev = event(namespace=NS, name=NAME, facets={"version": {"datasetVersion": "7"}})
    options = AssertionOptions(instance="sidecar-eu", marquez_web_url="http://marquez:3000/")
    out = event_mcps(ev, {REF: [result(r)]}, options=options)
    by_aspect = {m.aspectName: m.aspect for m in out}
    page = "http://marquez:3000/lineage/dataset/file/%2Fdata%2Fwarehouse%2Fevery_kind"
    info, run = by_aspect["assertionInfo"], by_aspect["assertionRunEvent"]
    assert isinstance(info, AssertionInfoClass) and info.externalUrl == page
    assert isinstance(run, AssertionRunEventClass) and run.result is not None
    assert run.result.externalUrl == page
    assert run.batchSpec is not None and run.batchSpec.nativeBatchId == "7"
    platform = by_aspect["dataPlatformInstance"]
    assert platform.instance == (  # type: ignore[union-attr]
        "urn:li:dataPlatformInstance:(urn:li:dataPlatform:lineage-quality,sidecar-eu)"
    )


def test_shacl_counts_are_parameters_and_min_count_1_max_count_1_is_not_null() -> None:
    """Seed 000, issue 49: minCount 1 + maxCount 1 is FIELD_METRIC NOT_NULL (DataHub's field
    metric NULL_COUNT EQUAL_TO 0, the run event's actualAggValue the nulls found); minInclusive
    and maxInclusive FIELD_METRIC MIN / MAX; an optional field (minCount 0) has no assertion,
    not even for its maxLength."""
    shacl = {r.id: r for c, r in _rules() if r.origin == "shacl"}
    assert not [r for r in shacl.values() if r.columns == ("note",)]  # minCount 0: optional
    results = [
        RuleResult(rule=r, status=Status.FAILED, actual=2, failing_rows=2, row_count=10)
        for r in shacl.values()
    ]
    out = event_mcps(event(namespace=NS, name=NAME), {REF: results})
    infos = {m.entityUrn: m.aspect for m in out if isinstance(m.aspect, AssertionInfoClass)}
    runs = {m.entityUrn: m.aspect for m in out if isinstance(m.aspect, AssertionRunEventClass)}
    urn = assertion_urn(shacl["every_kind_order_id_not_null"], DATASET)
    required = infos[urn]
    assert isinstance(required, AssertionInfoClass) and required.fieldAssertion is not None
    assert required.fieldAssertion.type == "FIELD_METRIC"
    metric = required.fieldAssertion.fieldMetricAssertion
    assert metric is not None and (metric.metric, metric.operator) == ("NULL_COUNT", "EQUAL_TO")
    assert metric.parameters is not None and metric.parameters.value is not None
    assert metric.parameters.value.value == "0"
    assert (required.customProperties["minCount"], required.customProperties["maxCount"]) == (
        "1",
        "1",
    )
    run = runs[urn]
    assert isinstance(run, AssertionRunEventClass) and run.result is not None
    assert (run.result.actualAggValue, run.result.missingCount) == (2.0, 2)
    for constraint, expected in (
        ("min_inclusive", ("MIN", "GREATER_THAN_OR_EQUAL_TO", "0")),
        ("max_inclusive", ("MAX", "LESS_THAN_OR_EQUAL_TO", "1000")),
    ):
        urn = assertion_urn(shacl[f"every_kind_amount_{constraint}"], DATASET)
        info = infos[urn]
        assert isinstance(info, AssertionInfoClass) and info.fieldAssertion is not None
        assert info.fieldAssertion.type == "FIELD_METRIC"
        found = info.fieldAssertion.fieldMetricAssertion
        assert found is not None and found.parameters is not None
        assert found.parameters.value is not None
        assert (found.metric, found.operator, found.parameters.value.value) == expected
        run = runs[urn]
        assert isinstance(run, AssertionRunEventClass) and run.result is not None
        # checked per value: the offending rows, never taken for the column's MIN or MAX
        assert (run.result.actualAggValue, run.result.unexpectedCount) == (None, 2)  # fmt: skip
    cardinality = infos[assertion_urn(shacl["every_kind_tags_cardinality"], DATASET)]
    assert isinstance(cardinality, AssertionInfoClass)
    assert cardinality.customAssertion is not None
    native = cardinality.customAssertion.nativeParameters
    assert native is not None and (native["minCount"], native["maxCount"]) == ("1", "3")


def test_a_history_result_says_what_it_compared_with() -> None:
    usual = next(r for _, r in _rules() if r.id == "rows_usual")
    res = RuleResult(
        rule=usual,
        status=Status.FAILED,
        actual=40,
        measured=40,
        row_count=40,
        expected_text="within 3 sd of the last 7 runs: [90, 110]",
        baseline=(("n", 7), ("mean", 100.0), ("stddev", 3.3333333)),
    )
    out = event_mcps(event(namespace=NS, name=NAME), {REF: [res]})
    run = next(m.aspect for m in out if isinstance(m.aspect, AssertionRunEventClass))
    assert run.result is not None and run.result.nativeResults is not None
    native = run.result.nativeResults
    assert native["expected"] == "within 3 sd of the last 7 runs: [90, 110]"
    assert (native["baseline.n"], native["baseline.mean"], native["measured"]) == ("7", "100", "40")
    assert native["baseline.stddev"] == "3.3333333"

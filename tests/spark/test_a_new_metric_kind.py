"""Issue 38's done-when: a new metric kind is ONE module. This module is that module: it declares
`distinctValues` (the number of distinct non-null values of a column, Deequ's CountDistinct),
registers it, and nothing else in the project is touched. The kind is then read from an ODCS
contract and from the schema-rules JSON format, measured in the one fused scan on real Spark,
and reported in the assertions facet, in `dataQualityMetrics` (distinctCount) and in DataHub's
MCPs (checked with DataHub's own classes and `datahub check metadata-file`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datahub"))

from samples import check_metadata_file, event

from lineage_quality.contracts.odcs import parse_odcs
from lineage_quality.contracts.schema_json import parse_schema_json
from lineage_quality.datahub.file import McpFileWriter
from lineage_quality.datahub.mcps import event_mcps, platform_mcp
from lineage_quality.engine import build_plan
from lineage_quality.engine.analyzers import Analyzer
from lineage_quality.engine.expressions import Expr, function
from lineage_quality.engine.run import run_plan
from lineage_quality.engine.shared_columns import Shared
from lineage_quality.engine.verdicts import value_verdict
from lineage_quality.errors import ContractError
from lineage_quality.kinds import Kind, KindOptions, register, unregister
from lineage_quality.kinds.datahub_mapping import metric_shape
from lineage_quality.producer.enrich import enrich
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.datahub_shape import COLUMN, Shape
from lineage_quality.values.metric import Metric
from lineage_quality.values.refs import DatasetRef

# -- the kind: everything it is, in one place ------------------------------------------------


@attrs.frozen
class DistinctOptions(KindOptions):
    """Its own typed parameter: ignore case when counting (validated here, with the error text)."""

    ignoreCase: bool = attrs.field(default=False)

    @ignoreCase.validator
    def _boolean(self, attribute: Any, value: Any) -> None:
        if not isinstance(value, bool):
            raise ValueError(f"ignoreCase must be true or false, not {value!r}")


class DistinctCount(Analyzer):
    """count(DISTINCT c) in the fused aggregation, judged as a value; fills distinctCount."""

    def aggregation(
        self, metric: Metric, now: float, shared: Shared | None, counted: Expr | None
    ) -> Expr:
        assert metric.column is not None
        c = "`" + metric.column.replace("`", "``") + "`"
        if metric.arg == "ignoreCase":
            c = f"lower(CAST({c} AS STRING))"
        return function("expr", f"count(DISTINCT {c})")

    def result(self, df: Any, rule: Rule, metric: Metric, value: Any, rows: int) -> RuleResult:
        return value_verdict(rule, value, rows)

    def measures(self, metric: Metric) -> str | None:
        # a case-folded count is not the column's distinct count
        return None if metric.arg == "ignoreCase" else "distinct"


class DistinctValues(Kind):
    value = "distinctValues"
    assertion_name = "distinct_values"
    needs_operator = True  # no implied threshold: "at least 3 countries"
    odcs_metrics = ("distinctValues",)
    odcs_verbs = (("hasDistinctValuesGreaterThan", "mustBeGreaterThan", "value"),)
    json_key = "min_distinct"
    options_type = DistinctOptions

    def json_rule(self, value: Any) -> tuple[Threshold, dict[str, Any]]:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError("min_distinct must be a non-negative integer")
        return Threshold(Operator.GREATER_OR_EQUAL, value), {}

    def metric(self, rule: Rule, column: str, ctype: str) -> Metric | str:
        if ctype.startswith(("map<", "struct<")):
            return f"distinctValues cannot count {ctype} values ({column})"
        folded = isinstance(rule.options, DistinctOptions) and rule.options.ignoreCase
        return Metric(self.value, column, arg="ignoreCase" if folded else None)

    def datahub_shape(self, rule: Rule) -> Shape:
        return metric_shape(rule, COLUMN, "UNIQUE_COUNT")

    def analyzer(self) -> DistinctCount:
        return DistinctCount()


@pytest.fixture(scope="module", autouse=True)
def registered() -> Iterator[Kind]:
    kind = register(DistinctValues())
    yield kind
    unregister(kind.value)


# -- the kind at work --------------------------------------------------------------------------

ODCS = """\
apiVersion: v3.0.2
kind: DataContract
id: orders
version: 1.0.0
status: active
schema:
  - name: orders
    customProperties:
      - property: openlineage.namespace
        value: file
      - property: openlineage.name
        value: "*/orders"
    properties:
      - name: country
        quality:
          - metric: distinctValues
            mustBeGreaterOrEqualTo: 3
            id: countries
          - metric: distinctValues
            arguments:
              ignoreCase: true
            mustBeGreaterOrEqualTo: 3
            id: countries_folded
          - rule: hasDistinctValuesGreaterThan
            arguments:
              value: 1
            id: more_than_one
"""

JSON_RULES = {
    "rules": [{"field": "country", "type": "string", "min_distinct": 3}],
    "dataset": {"namespace": "file", "name": "*/orders"},
}

ROWS = [("FR", 1), ("fr", 2), ("DE", 3), ("DE", 4), (None, 5)]  # 3 distinct, 2 folded
REF = DatasetRef("outputs", 0, "file", "/data/orders")


def _rules() -> list[Rule]:
    (odcs,) = parse_odcs(ODCS, "orders.yaml")
    schema_json = parse_schema_json(json.dumps(JSON_RULES), "orders.json")
    ours = [r for r in (*odcs.rules, *schema_json.rules) if r.kind.value == "distinctValues"]
    assert sorted(r.id for r in ours) == [
        "countries",
        "countries_folded",
        "min_distinct_country",
        "more_than_one",
    ]
    return ours


def test_read_from_odcs_and_json_rules_with_its_typed_parameters() -> None:
    rules = {r.id: r for r in _rules()}
    assert rules["countries"].threshold == Threshold(Operator.GREATER_OR_EQUAL, 3)
    assert rules["countries_folded"].options == DistinctOptions(ignoreCase=True)
    assert rules["more_than_one"].threshold == Threshold(Operator.GREATER_THAN, 1)
    assert rules["min_distinct_country"].threshold == Threshold(Operator.GREATER_OR_EQUAL, 3)
    assert rules["countries_folded"].params()["ignoreCase"] is True
    assert rules["countries"].assertion == "distinct_values"


def test_its_own_errors_name_the_entry() -> None:
    bad = ODCS.replace("ignoreCase: true", "ignoreCase: maybe")
    with pytest.raises(ContractError, match=r"quality\[1\].*ignoreCase must be true or false"):
        parse_odcs(bad, "orders.yaml")
    no_operator = ODCS.replace(
        "            mustBeGreaterOrEqualTo: 3\n            id: countries\n",
        "            id: countries\n",
    )
    with pytest.raises(ContractError, match=r"quality\[0\].*distinctValues needs an operator"):
        parse_odcs(no_operator, "orders.yaml")
    bad_json = {**JSON_RULES, "rules": [{"field": "country", "min_distinct": -1}]}
    with pytest.raises(ContractError, match=r"min_distinct.*min_distinct must be a non-neg"):
        parse_schema_json(json.dumps(bad_json), "orders.json")


def _results(spark: Any) -> list[RuleResult]:
    df = spark.createDataFrame(ROWS, "country string, id int")
    rules = _rules()
    plan = build_plan(rules, [(f.name, f.dataType.simpleString()) for f in df.schema.fields])
    ours = [m for m in plan.metrics if m.kind == "distinctValues"]
    assert len(ours) == 2  # one slot per distinct measurement: plain (3 rules) and folded
    assert all(step.metric is not None for step in plan.steps)  # all in the fused scan
    return run_plan(df, plan)


def test_measured_in_the_fused_scan_and_reported_everywhere(spark: Any, tmp_path: Path) -> None:
    results = {r.rule.id: r for r in _results(spark)}
    assert results["countries"].status is Status.PASSED and results["countries"].actual == 3
    folded = results["countries_folded"]
    assert folded.status is Status.FAILED and folded.actual == 2
    assert results["more_than_one"].status is Status.PASSED
    assert results["min_distinct_country"].actual == 3

    # the OpenLineage facets: its assertion, and the column's distinctCount
    enriched = enrich(event(name="/data/orders"), {REF: list(results.values())})
    facets = enriched["outputs"][0]["facets"]
    assertions = facets["dataQualityAssertions"]["assertions"]
    ours = [a for a in assertions if a["assertion"] == "distinct_values"]
    assert len(ours) == 4 and {a["column"] for a in ours} == {"country"}
    assert sorted(a["success"] for a in ours) == [False, True, True, True]
    metrics = facets["dataQualityMetrics"]["columnMetrics"]["country"]
    assert metrics["distinctCount"] == 3  # the plain count; the folded one is no column number

    # DataHub: UNIQUE_COUNT assertions with their thresholds, valid by DataHub's own check; a
    # kind that declares no native DataHub type (issue 40) is a CUSTOM assertion with its shape
    from datahub.metadata.schema_classes import AssertionInfoClass, AssertionRunEventClass

    mcps = event_mcps(event(name="/data/orders"), {REF: list(results.values())})
    infos = [m.aspect for m in mcps if isinstance(m.aspect, AssertionInfoClass)]
    custom = [i.customAssertion for i in infos if i.type == "CUSTOM"]
    unique = [c for c in custom if c.aggregation == "UNIQUE_COUNT"]
    assert len(unique) == 4
    operators = sorted(c.operator for c in unique)
    assert operators == ["GREATER_THAN", "GREATER_THAN_OR_EQUAL_TO", "GREATER_THAN_OR_EQUAL_TO",
                         "GREATER_THAN_OR_EQUAL_TO"]  # fmt: skip
    runs = [m.aspect for m in mcps if isinstance(m.aspect, AssertionRunEventClass)]
    assert sorted(r.result.actualAggValue for r in runs if r.result.actualAggValue is not None
                  and r.result.actualAggValue in (2.0, 3.0)) == [2.0, 3.0, 3.0, 3.0]  # fmt: skip
    path = tmp_path / "mcps.json"
    McpFileWriter(path).write([platform_mcp(), *mcps])
    assert f"{len(mcps) + 1} MCEs found - all valid" in check_metadata_file(path)


def test_a_column_it_cannot_count_is_an_error_for_that_rule_only(spark: Any) -> None:
    df = spark.createDataFrame([({"a": 1}, 1)], "country map<string,int>, id int")
    results = {r.rule.id: r for r in run_plan(df, build_plan(_rules(), [
        (f.name, f.dataType.simpleString()) for f in df.schema.fields]))}  # fmt: skip
    assert results["countries"].status is Status.ERROR
    assert "cannot count map<string,int>" in (results["countries"].message or "")

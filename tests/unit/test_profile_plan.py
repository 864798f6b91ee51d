"""The opt-in profile (issue 28.1): declared in ODCS, planned into the same fused aggregation,
and the dataset's numbers read off the values the passes returned. Pure: no Spark."""

from __future__ import annotations

from decimal import Decimal

import pytest

from lineage_quality.contracts import parse_odcs
from lineage_quality.engine import build_plan
from lineage_quality.engine.measures import dataset_measures
from lineage_quality.engine.plan import ROWS, Measure, Metric, stat_metric
from lineage_quality.engine.uniqueness import KeyCounts
from lineage_quality.errors import ContractError
from lineage_quality.kinds import RuleKind
from lineage_quality.measures import ColumnMeasures
from lineage_quality.rules import Operator, Rule, Threshold

ZERO = Threshold(Operator.MUST_BE, 0)
SCHEMA = [("id", "bigint"), ("name", "string"), ("amount", "decimal(10,2)"), ("tags", "array<int>")]


def _contract(object_props: str = "", contract_props: str = "") -> str:
    return f"""\
apiVersion: v3.0.2
kind: DataContract
id: orders
version: 1.0.0
status: active
{contract_props}schema:
  - name: orders
    customProperties:
      - property: openlineage.namespace
        value: file
      - property: openlineage.name
        value: "*/orders"
{object_props}    quality:
      - metric: rowCount
        mustBeGreaterThan: 0
"""


OBJECT_ON = """\
      - property: lineageQuality.profile
        value: true
"""
CONTRACT_ON = """\
customProperties:
  - property: lineageQuality.profile
    value: "yes"
"""


def test_the_profile_is_off_unless_a_contract_asks_for_it() -> None:
    (plain,) = parse_odcs(_contract(), "c.yaml")
    (on,) = parse_odcs(_contract(OBJECT_ON), "c.yaml")
    (inherited,) = parse_odcs(_contract(contract_props=CONTRACT_ON), "c.yaml")
    off_here = OBJECT_ON.replace("true", "false")
    (overridden,) = parse_odcs(_contract(off_here, CONTRACT_ON), "c.yaml")
    assert (plain.profile, on.profile, inherited.profile, overridden.profile) == (
        False,
        True,
        True,
        False,
    )


def test_a_misspelt_profile_value_is_refused_where_it_is_written() -> None:
    with pytest.raises(ContractError) as info:
        parse_odcs(_contract(OBJECT_ON.replace("true", "ture")), "c.yaml")
    assert "lineageQuality.profile must be true or false" in info.value.detail
    assert info.value.where is not None and "schema[0].customProperties" in info.value.where


def test_the_profile_adds_each_columns_cheap_metrics_to_the_one_plan_once() -> None:
    rules = [
        Rule(id="nn", kind=RuleKind.NULL_VALUES, columns=["id"], threshold=ZERO),
        Rule(
            id="max",
            kind=RuleKind.STATISTIC,
            columns=["id"],
            statistic="max",
            threshold=Threshold(Operator.LESS_THAN, 10),
        ),
    ]
    without = build_plan(rules, SCHEMA)
    plan = build_plan(rules, SCHEMA, profile=True)
    assert not without.profiled and plan.profiled
    assert plan.metrics[: len(without.metrics)] == without.metrics  # the rules' slots unchanged
    assert plan.steps == without.steps and plan.key_sets == without.key_sets
    added = plan.metrics[len(without.metrics) :]
    assert set(added) == {
        stat_metric("id", "bigint", "min"),
        stat_metric("id", "bigint", "sum"),  # the id's nulls and max: the rules' own slots
        Metric(Measure.NULLS, "name"),  # a string: nulls only, no min/max of text
        Metric(Measure.NULLS, "amount"),
        *(stat_metric("amount", "decimal(10,2)", a) for a in ("min", "max", "sum")),
        Metric(Measure.NULLS, "tags"),
    }
    assert len(added) == len(set(added))


def test_a_plan_with_every_rule_decided_from_the_schema_still_scans_for_a_profile() -> None:
    exists = Rule(id="t", kind=RuleKind.COLUMN_TYPE, columns=["id"], threshold=ZERO)
    assert build_plan([exists], SCHEMA, profile=True).metrics[0] == ROWS
    assert build_plan([exists], SCHEMA, profile=True).profiled


def test_measures_are_read_off_the_values_of_the_plans_passes() -> None:
    rules = [
        Rule(id="nn", kind=RuleKind.NULL_VALUES, columns=["name"], threshold=ZERO),
        Rule(id="u", kind=RuleKind.DUPLICATE_VALUES, columns=["id"], threshold=ZERO),
        Rule(id="uu", kind=RuleKind.DUPLICATE_VALUES, columns=["id", "name"], threshold=ZERO),
        Rule(
            id="range",
            kind=RuleKind.VALUE_RANGE,
            columns=["amount"],
            min_value=0,
            threshold=ZERO,
        ),
        *(
            Rule(
                id=s,
                kind=RuleKind.STATISTIC,
                columns=["amount"],
                statistic=s,
                threshold=Threshold(Operator.GREATER_THAN, -1),
            )
            for s in ("sum", "avg", "median", "stddev")
        ),
        Rule(
            id="missing",
            kind=RuleKind.MISSING_VALUES,
            columns=["tags"],
            missing_values=["x"],
            threshold=ZERO,
        ),
    ]
    plan = build_plan(rules, SCHEMA)
    by_kind = {(m.kind, m.column, m.arg): i for i, m in enumerate(plan.metrics)}
    values: list[object] = [None] * len(plan.metrics)
    values[0] = 10
    values[by_kind[(Measure.NULLS, "name", None)]] = 2
    values[by_kind[(Measure.OUT_OF_RANGE, "amount", None)]] = 4  # says nothing of the column
    values[by_kind[(Measure.STAT, "amount", "sum")]] = Decimal("12.50")
    values[by_kind[(Measure.STAT, "amount", "avg")]] = 1.25
    values[by_kind[(Measure.STAT, "amount", "median")]] = RuntimeError("no median")
    values[by_kind[(Measure.STAT, "amount", "stddev")]] = None  # no non-null value
    values[by_kind[(Measure.MISSING, "tags", None)]] = 3  # null or "x": not a null count
    keys = {0: KeyCounts(rows=9, distinct=7), 1: KeyCounts(rows=8, distinct=8)}
    measures = dataset_measures(plan, values, keys, 10, [n for n, _ in SCHEMA])
    assert measures.rows == 10 and not measures.profiled
    assert measures.columns == (  # in the dataset's column order, only columns with a number
        ("id", ColumnMeasures(nulls=1, distinct=7)),  # a one-column key's pass: 9 of 10 non-null
        ("name", ColumnMeasures(nulls=2)),  # the compound key says nothing of name alone
        ("amount", ColumnMeasures(sum=12.5, mean=1.25)),
    )

"""Reconciliation rules as contracts declare them (ODCS `type: custom`, engine lineage-quality):
read with their options, refused with the file and the place when malformed, another engine's
custom entry still skipped, and on one dataset alone (`check`) SKIPPED saying why. Pure."""

from __future__ import annotations

from typing import Any

import pytest
from test_odcs import BOUND

from lineage_quality.contracts.odcs import parse_odcs
from lineage_quality.engine.plan import build_plan
from lineage_quality.errors import ContractError
from lineage_quality.kinds import ReconcileOptions, RuleKind
from lineage_quality.results import ACROSS_DATASETS, Status
from lineage_quality.rules import Operator, Unit


def _entry(body: str, on_property: bool = False) -> str:
    if on_property:
        lines = "\n".join("            " + line for line in body.splitlines())
        head = "    properties:\n      - name: customer_id\n        quality:\n"
        return BOUND + head + lines + "\n"
    lines = "\n".join("      " + line for line in body.splitlines())
    return BOUND + "    quality:\n" + lines + "\n"


def _rules(text: str) -> list[Any]:
    return [r for b in parse_odcs(text, "c.yaml") for r in b.rules]


def test_the_issue_shape_is_read_with_its_options() -> None:
    (rule,) = _rules(_entry(
        "- type: custom\n  engine: lineage-quality\n  name: every_order_kept\n"
        "  implementation:\n    reconcile: rowCount\n    input: \"*/lake/orders\"\n  mustBe: 0"
    ))  # fmt: skip
    assert rule.kind is RuleKind.RECONCILE and rule.name == "every_order_kept"
    assert rule.options == ReconcileOptions("rowCount", "*/lake/orders")
    assert (rule.threshold.operator, rule.threshold.value) == (Operator.MUST_BE, 0)
    assert rule.columns == () and rule.assertion == "reconciled_rowCount"
    assert rule.params()["reconcile"] == "rowCount" and rule.params()["input"] == "*/lake/orders"
    assert "output rowCount minus input rowCount" in (rule.kind.expected(rule) or "")


def test_a_column_comes_from_the_property_or_the_implementation() -> None:
    (on_prop,) = [r for r in _rules(_entry(
        "- type: custom\n  engine: lineage-quality\n  implementation: "
        "{reconcile: references, input: \"*/lake/customers\", inputColumn: id}",
        on_property=True,
    )) if r.kind is RuleKind.RECONCILE]  # fmt: skip
    assert on_prop.columns == ("customer_id",) and on_prop.options.inputColumn == "id"
    (on_object,) = _rules(_entry(
        "- type: custom\n  engine: lineage-quality\n  implementation: "
        "{reconcile: sum, input: \"*/o\", column: amount}\n  mustBeBetween: [-1, 1]\n"
        "  unit: percent"
    ))  # fmt: skip
    assert on_object.columns == ("amount",) and on_object.unit is Unit.PERCENT


@pytest.mark.parametrize(
    ("implementation", "message"),
    [
        ("{reconcile: average, input: x}", "reconcile must be one of rowCount, sum, distinct"),
        ("{reconcile: rowCount}", "implementation needs `input`"),
        ("{reconcile: sum, input: x}", "reconcile: sum compares a column"),
        ("{reconcile: rowCount, input: x, table: y}", "unknown implementation key(s) table"),
        ("{reconcile: rowCount, input: ''}", "input must be a non-empty string"),
        ("just text", "`implementation` must be an object"),
    ],
)
def test_a_malformed_reconciliation_names_the_file_and_the_place(
    implementation: str, message: str
) -> None:
    text = _entry(f"- type: custom\n  engine: lineage-quality\n  implementation: {implementation}")
    with pytest.raises(ContractError) as info:
        parse_odcs(text, "c.yaml")
    assert info.value.path == "c.yaml" and message in info.value.detail
    assert info.value.where is not None and "schema[0].quality[0]" in info.value.where


def test_a_custom_entry_of_another_engine_is_still_skipped() -> None:
    text = _entry("- type: custom\n  engine: soda\n  implementation: 'checks for x: ...'")
    assert _rules(text) == []


def test_on_one_dataset_alone_it_is_skipped_saying_why() -> None:
    (rule,) = _rules(_entry(
        "- type: custom\n  engine: lineage-quality\n  implementation: "
        "{reconcile: rowCount, input: x}"
    ))  # fmt: skip
    (step,) = build_plan([rule], [("a", "int")]).steps
    assert step.result is not None and step.result.status is Status.SKIPPED
    assert step.result.skip_reason == ACROSS_DATASETS
    assert "judged where a run writes the dataset" in (step.result.message or "")

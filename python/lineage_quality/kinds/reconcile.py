"""reconcile: a run's output compared with one of the inputs that run read, at the version it
read them (docs/rules.md, "Reconciliation"). Declared in the output's contract as an ODCS
`type: custom` entry for this engine:

    - type: custom
      engine: lineage-quality
      name: every_order_kept
      implementation: {reconcile: rowCount, input: "*/lake/orders"}
      mustBe: 0

`rowCount`, `sum` and `distinct` compare the output's number with the input's (output minus
input; `unit: percent`: relative to the input's); `references` counts the output's values of
`column` not found in the input's `inputColumn`. The numbers come from each dataset's own scan
(the evaluator adds what is missing to it); only `references` joins the two.

The rule is judged across the run's datasets, so only where a run is known (serve, attach): on
one dataset alone (`check`), or on a dataset the run read, it is SKIPPED, saying why.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import attrs

from lineage_quality.kinds.datahub_mapping import metric_shape
from lineage_quality.rules.model import Kind, KindOptions, Rule
from lineage_quality.values.datahub_shape import COLUMN, NATIVE, ROWS, Shape

MEASURES = ("rowCount", "sum", "distinct", "references")
NEEDS_COLUMN = frozenset({"sum", "distinct", "references"})


def _measure(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value not in MEASURES:
        raise ValueError(f"reconcile must be one of {', '.join(MEASURES)}, not {value!r}")


def _text(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ValueError(f"{attribute.name} must be a non-empty string, not {value!r}")


@attrs.frozen
class ReconcileOptions(KindOptions):
    """What is compared: `reconcile` (rowCount, sum, distinct, references), the run's `input`
    (a dataset name with shell globs, matched as a binding matches, or a catalog table), and the
    input's column (`inputColumn`; default: the output's column of the same name)."""

    reconcile: str = attrs.field(validator=_measure)
    input: str = attrs.field(validator=_text)
    inputColumn: str | None = attrs.field(default=None, validator=_text)

    @classmethod
    def of(cls, implementation: Any) -> ReconcileOptions:
        """From an ODCS entry's `implementation` object; ValueError names what is wrong."""
        if not isinstance(implementation, dict):
            raise ValueError("a reconciliation's `implementation` must be an object")
        unknown = sorted(set(implementation) - {"reconcile", "input", "column", "inputColumn"})
        if unknown:
            raise ValueError(
                f"unknown implementation key(s) {', '.join(map(str, unknown))} "
                "(reconcile, input, column, inputColumn)"
            )
        for key in ("reconcile", "input"):
            if key not in implementation:
                raise ValueError(f"a reconciliation's implementation needs `{key}`")
        return cls(
            implementation["reconcile"],
            implementation["input"],
            implementation.get("inputColumn"),
        )


def options_of(rule: Rule) -> ReconcileOptions:
    assert isinstance(rule.options, ReconcileOptions)
    return rule.options


def input_column(rule: Rule) -> str | None:
    """The input's column compared (the output's own name when none is given)."""
    return options_of(rule).inputColumn or rule.column


class Reconcile(Kind):
    value = "reconcile"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType({"options": ReconcileOptions("rowCount", "*/warehouse/raw_orders")})
    datahub_type = "CUSTOM"
    assertion_name = "reconciled_with_input"
    columns = "optional"
    scan = "across"
    options_type = ReconcileOptions
    relative = True  # unit: percent is relative to the input's number
    priority = 1

    def validate(self, rule: Rule) -> None:
        if not isinstance(rule.options, ReconcileOptions):
            raise ValueError("a reconciliation needs its implementation (reconcile, input)")
        if rule.options.reconcile in NEEDS_COLUMN and rule.column is None:
            raise ValueError(
                f"reconcile: {rule.options.reconcile} compares a column: give `column` in the "
                "implementation, or declare it under the property"
            )
        if len(rule.columns) > 1:
            raise ValueError("a reconciliation compares one column")

    def assertion(self, rule: Rule) -> str:
        return f"reconciled_{options_of(rule).reconcile}"

    def expected(self, rule: Rule) -> str | None:
        options = options_of(rule)
        what = (
            "output values not found in the input"
            if options.reconcile == "references"
            else f"output {options.reconcile} minus input {options.reconcile}"
        )
        suffix = " (% of the input's)" if rule.unit.value == "percent" else ""
        return f"{what} {rule.threshold.describe()}{suffix}"

    def datahub_shape(self, rule: Rule) -> Shape:
        # CUSTOM, its parameters (reconcile, input, inputColumn) from the rule's params
        return metric_shape(rule, ROWS if rule.column is None else COLUMN, NATIVE)

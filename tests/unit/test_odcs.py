from pathlib import Path

import pytest

from lineage_quality.contracts import load_contracts, parse_odcs
from lineage_quality.errors import ContractError
from lineage_quality.kinds import RuleKind
from lineage_quality.rules import Operator, Threshold, Unit

HEAD = """\
apiVersion: v3.0.2
kind: DataContract
id: orders
version: 1.0.0
status: active
"""

BOUND = (
    HEAD
    + """\
schema:
  - name: orders
    customProperties:
      - property: openlineage.namespace
        value: file
      - property: openlineage.name
        value: "*/orders"
"""
)


def test_reads_library_metrics_operators_units_and_metadata() -> None:
    text = (
        BOUND
        + """\
    quality:
      - metric: rowCount
        mustBeGreaterThan: 100
      - metric: duplicateValues
        arguments:
          properties: [tenant_id, order_id]
        mustBe: 0
    properties:
      - name: order_id
        quality:
          - metric: nullValues
            mustBeLessThan: 1
            unit: percent
            severity: error
            name: ids_present
            description: ids must be there
          - rule: duplicateCount
            mustBe: 0
      - name: status
        quality:
          - metric: invalidValues
            arguments:
              validValues: [OPEN, DONE]
            mustBeBetween: [0, 3]
      - name: email
        physicalName: email_address
        quality:
          - metric: invalidValues
            pattern: '^.+@.+$'
"""
    )
    (binding,) = parse_odcs(text, "orders.yaml")
    rules = {r.id: r for r in binding.rules if r.kind is not RuleKind.COLUMN_TYPE}
    assert len(rules) == 6
    # and the schema as rules: each property exists (no types declared here)
    exists = [r for r in binding.rules if r.kind is RuleKind.COLUMN_TYPE]
    assert [(r.columns, r.expected_type) for r in exists] == [
        (("order_id",), None),
        (("status",), None),
        (("email_address",), None),
    ]
    row_count = rules["orders.orders.rowCount.0"]
    assert row_count.kind is RuleKind.ROW_COUNT
    assert row_count.threshold.operator is Operator.GREATER_THAN
    assert row_count.threshold.value == 100
    compound = rules["orders.orders.duplicateValues.1"]
    assert compound.columns == ("tenant_id", "order_id")
    nulls = rules["orders.orders.order_id.nullValues.0"]
    assert (nulls.unit, nulls.severity, nulls.name) == (Unit.PERCENT, "error", "ids_present")
    assert nulls.description == "ids must be there"
    assert nulls.source.startswith("orders.yaml: schema[0].properties[0].quality[0] (line ")
    assert rules["orders.orders.order_id.duplicateCount.1"].kind is RuleKind.DUPLICATE_VALUES
    accepted = rules["orders.orders.status.invalidValues.0"]
    assert accepted.valid_values == ("OPEN", "DONE")
    assert (accepted.threshold.value, accepted.threshold.high) == (0, 3)
    # ODCS 3.0 placed `pattern` at the entry's top level; the physical name is the column.
    regex = rules["orders.orders.email.invalidValues.0"]
    assert regex.pattern == "^.+@.+$"
    assert regex.columns == ("email_address",)
    assert regex.threshold.operator is Operator.MUST_BE  # implied: no invalid rows


def test_binding_by_globs_and_by_server() -> None:
    (by_props,) = parse_odcs(BOUND, "a.yaml")
    assert by_props.matches("file", "/data/x/orders")
    assert by_props.matches("file", "/data/x/orders/")
    assert not by_props.matches("s3://bucket", "/data/x/orders")
    assert not by_props.matches("file", "/data/x/orders_old")

    text = (
        HEAD
        + """\
servers:
  - server: prod
    type: s3
    location: s3://lake/warehouse/orders/*.parquet
    format: parquet
schema:
  - name: orders
"""
    )
    (by_server,) = parse_odcs(text, "b.yaml")
    assert by_server.matches("s3://lake", "warehouse/orders")
    assert by_server.format == "parquet"


def test_relative_local_server_path_is_relative_to_the_contract(tmp_path: Path) -> None:
    contract = tmp_path / "contracts" / "c.yaml"
    contract.parent.mkdir()
    contract.write_text(
        HEAD
        + """\
servers:
  - server: local
    type: local
    path: ../data/orders
schema:
  - name: orders
"""
    )
    (binding,) = load_contracts([contract.parent])
    assert binding.matches("file", str(tmp_path / "data" / "orders"))


@pytest.mark.parametrize(
    ("body", "message", "where"),
    [
        ("schema:\n  - name: [unclosed\n", "invalid YAML", "line 7"),
        (
            BOUND.split("schema:")[1].join(["schema:", ""])
            + "    quality:\n      - metric: nullCount\n",
            "unknown metric 'nullCount'",
            "schema[0].quality[0] (line 14)",
        ),
        (
            BOUND
            + "    quality:\n      - metric: rowCount\n"
            + "        mustBe: 1\n        mustBeLessThan: 3\n",
            "one operator per quality entry, found: mustBe, mustBeLessThan",
            "schema[0].quality[0]",
        ),
        (
            BOUND + "    quality:\n      - metric: rowCount\n        mustBeBetween: [1, 2, 3]\n",
            "at most 2 items",
            "schema[0].quality[0].mustBeBetween",
        ),
        (
            BOUND + "    quality:\n      - metric: rowCount\n        mustBeBetween: [9, 2]\n",
            "lower bound 9 is greater than upper bound 2",
            "schema[0].quality[0]",
        ),
        (
            BOUND + "    quality:\n      - metric: rowCount\n        unit: percent\n",
            "rowCount cannot use unit: percent",
            "schema[0].quality[0]",
        ),
        (
            BOUND + "    quality:\n      - metric: duplicateValues\n",
            "needs arguments.properties",
            "schema[0].quality[0]",
        ),
        (
            BOUND + "    properties:\n      - name: a\n        quality:\n"
            "          - metric: nullValues\n            unit: lines\n",
            "unit must be rows or percent, not 'lines'",
            "schema[0].properties[0].quality[0].unit",
        ),
    ],
)
def test_broken_contracts_name_file_and_place(body: str, message: str, where: str) -> None:
    text = body if body.startswith("apiVersion") else HEAD + body
    with pytest.raises(ContractError) as info:
        parse_odcs(text, "broken.yaml")
    err = info.value
    assert err.path == "broken.yaml"
    assert message in err.detail
    assert err.where is not None and where in err.where
    assert str(err).startswith("broken.yaml: ")


def test_missing_file_is_a_contract_error(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="no such contract file"):
        load_contracts([tmp_path / "nope.yaml"])


def test_unbound_objects_are_refused_by_the_producer_loader(tmp_path: Path) -> None:
    contract = tmp_path / "c.yaml"
    contract.write_text(HEAD + "schema:\n  - name: orders\n")
    (binding,) = load_contracts([contract], require_binding=False)  # fine for `check`
    assert binding.patterns == ()
    with pytest.raises(ContractError) as info:
        load_contracts([contract])
    assert "orders is bound to no dataset" in info.value.detail
    assert info.value.where == "schema[0] (line 7)"


def _rules(body: str, version: str = "v3.1.0") -> dict[str, object]:
    text = BOUND.replace("v3.0.2", version) + body
    (binding,) = parse_odcs(text, "c.yaml")
    return {r.name or r.id: r for r in binding.rules}


@pytest.mark.parametrize("version", ["v3.0.0", "v3.0.2", "v3.1.0", "v3.2.0"])
def test_all_three_versions_read(version: str) -> None:
    rules = _rules("    quality:\n      - metric: rowCount\n        name: rc\n", version)
    assert list(rules) == ["rc"]


def test_verb_style_rules() -> None:
    body = """\
    quality:
      - rule: hasRowCountGreaterThan
        arguments: {value: 1000}
        name: big
      - rule: hasRowCountLessThan
        arguments: {value: 5}
        name: small
      - rule: isCompoundUnique
        arguments: {properties: [a, b]}
        name: ab
    properties:
      - name: a
        quality:
          - {rule: hasNoNullValues, name: nn}
          - {rule: isUnique, name: uq}
          - {rule: hasValidValue, arguments: {validValues: [x, y]}, name: vv}
          - {rule: hasNoMissingValues, arguments: {missingValues: ['', 'n/a']}, name: nm}
          - {rule: isOlderThan, arguments: {days: 1, seconds: 30}, name: old}
          - {rule: isNotOlderThan, arguments: {days: 365}, name: fresh}
          - {rule: hasAvgGreaterThan, arguments: {value: 50.5}, name: avg}
          - {rule: hasSumEqualTo, arguments: {value: 10000}, name: sum}
          - {rule: hasMedianNotEqualTo, arguments: {value: 0}, name: med}
          - {rule: noInvalidValues, pattern: '^x', name: inv}
"""
    r = _rules(body)
    assert (r["big"].threshold.operator, r["big"].threshold.value) == (Operator.GREATER_THAN, 1000)  # type: ignore[attr-defined]
    assert r["small"].threshold.operator is Operator.LESS_THAN  # type: ignore[attr-defined]
    assert r["ab"].columns == ("a", "b") and r["ab"].kind is RuleKind.DUPLICATE_VALUES  # type: ignore[attr-defined]
    assert r["nn"].kind is RuleKind.NULL_VALUES and r["uq"].kind is RuleKind.DUPLICATE_VALUES  # type: ignore[attr-defined]
    assert r["vv"].valid_values == ("x", "y")  # type: ignore[attr-defined]
    assert r["nm"].missing_values == ("", "n/a")  # type: ignore[attr-defined]
    assert r["old"].min_age_seconds == 86430 and r["fresh"].max_age_seconds == 365 * 86400  # type: ignore[attr-defined]
    avg = r["avg"]
    assert (avg.kind, avg.statistic, avg.threshold.operator, avg.threshold.value) == (  # type: ignore[attr-defined]
        RuleKind.STATISTIC,
        "avg",
        Operator.GREATER_THAN,
        50.5,
    )
    assert r["sum"].threshold.operator is Operator.MUST_BE  # type: ignore[attr-defined]
    assert r["med"].threshold.operator is Operator.MUST_NOT_BE  # type: ignore[attr-defined]
    assert r["inv"].pattern == "^x" and r["inv"].threshold.value == 0  # type: ignore[attr-defined]


def test_statistics_sql_text_and_schema_rules() -> None:
    body = """\
    quality:
      - type: sql
        query: SELECT count(*) FROM ${object}
        mustBeGreaterThan: 0
        name: q
      - type: text
        description: reviewed by a human
    properties:
      - name: price
        logicalType: number
        physicalType: decimal(10,2)
        required: true
        unique: true
        quality:
          - {metric: stddev, mustBeLessThan: 3, name: sd}
"""
    r = _rules(body)
    assert r["q"].kind is RuleKind.SQL and r["q"].query == "SELECT count(*) FROM ${object}"  # type: ignore[attr-defined]
    assert r["sd"].statistic == "stddev"  # type: ignore[attr-defined]
    assert r["price_type"].expected_type == "decimal(10,2)"  # type: ignore[attr-defined]
    assert r["price_required"].kind is RuleKind.NULL_VALUES  # type: ignore[attr-defined]
    assert r["price_unique"].kind is RuleKind.DUPLICATE_VALUES  # type: ignore[attr-defined]
    assert len(r) == 5  # the text entry is not executable and gives no rule
    off = (
        BOUND.replace(
            "      - property: openlineage.name",
            "      - property: lineageQuality.schemaRules\n        value: false\n"
            "      - property: openlineage.name",
        )
        + body
    )
    (binding,) = parse_odcs(off, "c.yaml")
    assert {r.name for r in binding.rules} == {"q", "sd"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("    quality:\n      - {metric: avg, mustBe: 1}\n", "avg must be declared on a property"),
        (
            "    properties:\n      - name: a\n        quality:\n          - {metric: avg}\n",
            "avg needs an operator",
        ),
        ("    quality:\n      - {type: sql, mustBe: 1}\n", "type: sql needs a `query`"),
        (
            "    quality:\n      - {rule: hasRowCountGreaterThan,"
            " arguments: {value: 1}, mustBe: 3}\n",
            "hasRowCountGreaterThan implies mustBeGreaterThan: 1; the entry says mustBe: 3",
        ),
        (
            "    quality:\n      - {rule: hasRowCountGreaterThan}\n",
            "needs a numeric arguments.value",
        ),
        (
            "    properties:\n      - name: a\n        quality:\n          - {rule: isOlderThan}\n",
            "needs arguments.days and/or arguments.seconds",
        ),
        (
            "    quality:\n      - {mustBeGreaterThan: 1}\n",
            "a value check (an operator without a rule) compares the values of a property",
        ),
        ("    quality:\n      - {type: magic}\n", "unknown quality type 'magic'"),
        ("    quality:\n      - {metric: rowCount, mustBe: 'ten'}\n", "mustBe: must be a number"),
        (
            "    properties:\n      - name: a\n        quality:\n          - {metric: rowCount}\n",
            "is a schema-level rule",
        ),
    ],
)
def test_more_broken_entries(body: str, message: str) -> None:
    with pytest.raises(ContractError) as info:
        parse_odcs(BOUND + body, "broken.yaml")
    assert message in info.value.detail


def test_dot_dot_in_an_event_name_cannot_climb_out_of_a_binding() -> None:
    (binding,) = parse_odcs(BOUND.replace('"*/orders"', '"/data/*"'), "c.yaml")
    assert binding.matches("file", "/data/orders")
    assert not binding.matches("file", "/data/../etc/shadow")
    assert binding.matches("file", "/data/x/../orders")  # still inside /data


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "    properties:\n      - name: a\n        quality:\n"
            "          - {metric: nullValues, mustBeGreaterThanOrEqualTo: 5}\n",
            "unknown key(s) mustBeGreaterThanOrEqualTo",
        ),
        (
            "    properties:\n      - name: a\n        quality:\n"
            "          - {metric: nullValues, id: x}\n          - {metric: nullValues, id: x}\n",
            "rule id 'x' is used twice",
        ),
        (
            "    properties:\n      - name: customer\n        logicalType: object\n"
            "        properties:\n          - name: email\n            quality:\n"
            "              - {metric: nullValues}\n",
            "nested property customer.email are not supported",
        ),
    ],
)
def test_typos_duplicates_and_nested_rules_are_refused(body: str, message: str) -> None:
    with pytest.raises(ContractError) as info:
        parse_odcs(BOUND + body, "c.yaml")
    assert message in info.value.detail


def test_java_regex_syntax_is_accepted_and_a_null_valid_value_is_harmless() -> None:
    body = (
        "    properties:\n      - name: a\n        quality:\n"
        "          - {metric: invalidValues, arguments: {pattern: '^\\p{Upper}+$'}, name: p}\n"
        "          - {metric: invalidValues, arguments: {pattern: '(?<y>\\d{4})'}, name: g}\n"
        "          - {metric: invalidValues, arguments: {validValues: [OPEN, null]}, name: v}\n"
    )
    r = _rules(body)
    assert r["p"].pattern == "^\\p{Upper}+$"  # type: ignore[attr-defined]
    assert r["v"].valid_values == ("OPEN", None)  # type: ignore[attr-defined]


# -- seed 003 as written (issue 41) ------------------------------------------------------------

IBAN = """\
properties:
  - name: iban
    quality:
     - rule: noInvalidValues
       mustBe: 0
       description: "The value must be an IBAN."
       pattern: '^[A-Z]{2}[0-9]{2}[A-Z0-9]{4}[0-9]{7}([A-Z0-9]?){0,16}$'
"""


def test_the_iban_example_is_read_as_written_and_binds_by_name() -> None:
    (binding,) = parse_odcs(IBAN, "/c/payments.yaml")
    rule = binding.rules[-1]
    assert rule.kind is RuleKind.INVALID_VALUES
    assert rule.threshold == Threshold(Operator.MUST_BE, 0)
    assert rule.pattern is not None and rule.pattern.startswith("^[A-Z]{2}")
    assert rule.description == "The value must be an IBAN."
    assert (binding.object_name, binding.tables, binding.patterns) == (
        "payments",
        ("payments",),
        (),
    )
    assert binding.matches_table(["spark_catalog.default.payments"])


def test_a_threshold_other_than_the_implied_one_is_refused_naming_both() -> None:
    with pytest.raises(ContractError) as info:
        parse_odcs(IBAN.replace("mustBe: 0", "mustBe: 2"), "p.yaml")
    assert "noInvalidValues implies mustBe: 0; the entry says mustBe: 2" in info.value.detail
    assert info.value.where == "schema[0].properties[0].quality[0] (line 4)"


def test_count_and_optional_a_value_checks() -> None:
    text = """\
properties:
  - name: price
    quality:
      - metric: count
        mustBeGreaterOrEqualTo: 2
      - mustBeGreaterThan: 1.0
        description: "The minimum price is $1"
      - mustBeBetween: [1, 100]
"""
    (binding,) = parse_odcs(text, "prices.yaml")
    _, count, above, between = binding.rules
    assert count.kind is RuleKind.COUNT
    assert count.threshold == Threshold(Operator.GREATER_OR_EQUAL, 2)
    assert above.kind is RuleKind.VALUE_CHECK
    assert above.threshold == Threshold(Operator.MUST_BE, 0)  # no value may fail the comparison
    assert above.params()["check"] == "mustBeGreaterThan" and above.params()["value"] == 1.0
    assert above.kind.expected(above) == "every value > 1"
    assert between.kind.expected(between) == "every value between 1 and 100"
    with pytest.raises(ContractError) as info:
        parse_odcs("properties:\n  - name: a\n    quality:\n      - metric: count\n", "c.yaml")
    assert "count needs an operator" in info.value.detail


def test_only_a_fragment_binds_by_name() -> None:
    (fragment,) = parse_odcs("schema:\n  - name: a\n", "c.yaml")
    assert fragment.tables == ("a",)
    (contract,) = parse_odcs("id: x\nschema:\n  - name: a\n", "c.yaml")
    assert contract.tables == ()  # a contract says how it binds (or serve says it does not)

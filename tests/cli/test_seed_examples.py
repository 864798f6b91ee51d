"""Issue 41's done-when: every example block of seeds 000, 002 and 003 is a file of
tests/seed_examples/ (the block verbatim, nothing added), run through `check` on tiny data built so
that each of its rules passes once and fails once. A block that cannot stand for rules on its own
is refused with the reason (docs/rules.md, "The seeds, requirement by requirement")."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from decimal import Decimal as D
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "seed_examples"
NOW = dt.datetime.now()

P, F, S, E = "PASSED", "FAILED", "SKIPPED", "ERROR"  # E: reported FAILED, code EVALUATION_ERROR


def days_ago(n: int) -> dt.datetime:
    return NOW - dt.timedelta(days=n)


# file -> [(DDL, rows or a builder, expected status per result in order)]; rows may be a
# callable(spark) giving a DataFrame (the row-count examples need many rows).
Data = list[tuple[Any, ...]] | Callable[[Any], Any]
CASES: dict[str, list[tuple[str, Data, list[str]]]] = {
    # -- seed 003, metrics style ------------------------------------------------------------
    "s003_02_null_values.yaml": [
        ("order_id INT", [(1,), (2,), (3,)], [P, P, P, P]),
        ("order_id INT", [(None,)] * 10 + [(1,), (2,)], [P, F, F, F]),
        ("other INT", [(1,)], [F, E, E, E]),
    ],
    "s003_03_missing_values.yaml": [
        ("email_address STRING", [("a@x.org",)], [P, P, P]),
        ("email_address STRING", [("",)] * 60 + [("N/A",)] * 40, [P, F, F]),
        ("other INT", [(1,)], [F, E, E]),
    ],
    "s003_04_valid_values.yaml": [
        ("line_item_unit STRING", [("kg",), ("pounds",)], [P, P]),
        ("line_item_unit STRING", [("lbs",)] * 5, [P, F]),
        ("other INT", [(1,)], [F, E]),
    ],
    "s003_05_valid_values_iban_pattern.yaml": [
        ("iban STRING", [("DE89370400440532013000",), ("GB29NWBK60161331926819",)], [P, P]),
        ("iban STRING", [("DE89370400440532013000",), ("not an IBAN",)], [P, F]),
        ("other INT", [(1,)], [F, E]),
    ],
    "s003_07_duplicate_values_schema.yaml": [
        ("tenant_id INT, order_id INT", [(1, 1), (1, 2), (2, 1)], [P]),
        ("tenant_id INT, order_id INT", [(1, 1), (1, 1)], [F]),
    ],
    "s003_08_row_count.yaml": [
        ("id BIGINT", lambda spark: spark.range(1_000_001), [P]),
        ("id BIGINT", [(1,)], [F]),
    ],
    "s003_09_avg.yaml": [
        ("order_total DOUBLE", [(120.0,), (180.0,)], [P, P]),
        ("order_total DOUBLE", [(10.0,), (20.0,)], [P, F]),
        ("order_total STRING", [("150",)], [F, E]),
    ],
    # -- seed 003, verb style ---------------------------------------------------------------
    "s003_12_verb_row_count.yaml": [
        ("id BIGINT", lambda spark: spark.range(1001), [P]),
        ("id BIGINT", lambda spark: spark.range(1000), [F]),
    ],
    "s003_13_verb_compound_uniqueness.yaml": [
        ("tenant_id INT, order_id INT", [(1, 1), (2, 1)], [P]),
        ("tenant_id INT, order_id INT", [(1, 1), (1, 1)], [F]),
    ],
    "s003_14_verb_null_values.yaml": [
        ("order_id INT", [(1,)], [P, P]),
        ("order_id INT", [(1,), (None,)], [P, F]),
        ("other INT", [(1,)], [F, E]),
    ],
    "s003_15_verb_allowed_values.yaml": [
        ("status STRING", [("OPEN",), ("SUCCESS",), ("CANCELED",)], [P, P]),
        ("status STRING", [("OPEN",), ("CLOSED",)], [P, F]),
        ("other INT", [(1,)], [F, E]),
    ],
    "s003_16_verb_uniqueness.yaml": [
        ("customer_id INT", [(1,), (2,)], [P, P]),
        ("customer_id INT", [(1,), (1,)], [P, F]),
        ("other INT", [(1,)], [F, E]),
    ],
    "s003_17_verb_age_checks.yaml": [
        ("created_at TIMESTAMP", [(days_ago(100),), (days_ago(200),)], [P, P, P]),
        ("created_at TIMESTAMP", [(days_ago(1),), (days_ago(400),)], [P, F, F]),
        ("other INT", [(1,)], [F, E, E]),
    ],
    "s003_18_verb_aggregations.yaml": [
        ("price DOUBLE, quantity INT, salary INT", [(60.0, 4000, 5), (70.0, 6000, 7)], [P] * 6),
        ("price DOUBLE, quantity INT, salary INT", [(10.0, 1, 0)], [P, F, P, F, P, F]),
        ("other INT", [(1,)], [F, E, F, E, F, E]),
    ],
    # -- seed 003, Optional A ---------------------------------------------------------------
    "s003_19_optional_a_value_check.yaml": [
        ("price DOUBLE", [(1.5,), (9.99,), (None,)], [P, P]),
        ("price DOUBLE", [(1.5,), (1.0,)], [P, F]),
        ("price STRING", [("2",)], [P, E]),
        ("other INT", [(1,)], [F, E]),
    ],
    # -- seed 002: the CLI JSON format's field items, one per file ----------------------------
    "s002_01_basic_type.json": [
        ("name STRING", [("ann",)], [P]),
        ("name INT", [(1,)], [F]),
    ],
    "s002_02_length_constraint.json": [
        ("name STRING", [("ann",)], [P, P]),
        ("name STRING", [("a" * 101,)], [P, F]),
        ("name INT", [(1,)], [F, S]),
    ],
    "s002_03_precision_scale.json": [
        ("price DECIMAL(10,2)", [(D("1.50"),)], [P]),
        ("price DECIMAL(12,2)", [(D("1.50"),)], [F]),
    ],
    "s002_04_complex_field.json": [
        ("email STRING", [("a@x.org",)], [P, P, P]),
        ("email STRING", [(None,), ("a" * 256,)], [P, F, F]),
        ("other STRING", [("a",)], [F, S, S]),
    ],
    # -- seed 002: the rule model -------------------------------------------------------------
    "s002_05_schema_rule_users.json": [
        (
            "id INT, email STRING, name STRING, price DECIMAL(10,2), created_at TIMESTAMP",
            [(1, "a@x.org", "ann", D("1.50"), NOW)],
            [P] * 8,
        ),
        (
            "id INT, email STRING, name STRING, price DECIMAL(10,2), created_at TIMESTAMP",
            [(1, "a" * 256, "b" * 101, D("1.50"), NOW)],
            [P, P, F, P, F, P, P, P],
        ),
        (
            "id STRING, email INT, name INT, price DOUBLE, created_at DATE, extra INT",
            [("1", 1, 1, 1.5, NOW.date(), 1)],
            [F, F, S, F, S, F, F, F],
        ),
    ],
    "s002_06_not_null_email.json": [
        ("email STRING", [("a@x.org",)], [P]),
        ("email STRING", [(None,)], [F]),
    ],
    "s002_07_range_age.json": [
        ("age INT", [(0,), (120,)], [P]),
        ("age INT", [(121,)], [F]),
    ],
    "s002_08_enum_status_with_filter.json": [
        # a deleted order's status is not counted: only rows where deleted_at IS NULL
        ("status STRING, deleted_at TIMESTAMP", [("NEW", None), ("OLD", NOW)], [P]),
        ("status STRING, deleted_at TIMESTAMP", [("NEW", None), ("OLD", None)], [F]),
    ],
    # -- seed 000: SHACL (assertions on, as the seed's context turns them on) -----------------
    "s000_00_inline_property_constraints.ttl": [
        ("tradeId STRING", [("TRADE-0001",), ("TRADE-0000000002",)], [P, P, P]),
        ("tradeId STRING", [(None,), ("T-1",), ("T" * 21,)], [F, F, F]),
    ],
    "s000_01_conforms_to_node_shape.ttl": [
        ("tradeId STRING", [("TRADE-0001",)], [P]),
        ("tradeId STRING", [(None,)], [F]),
    ],
    "s000_02_target_class_node_shape.ttl": [
        ("tradeId STRING", [("TRADE-0001",)], [P]),
        ("tradeId STRING", [(None,)], [F]),
    ],
    "s000_04_required_field.ttl": [
        ("accountId STRING", [("A-1",)], [P]),
        ("accountId STRING", [(None,)], [F]),
    ],
    "s000_05_field_size.ttl": [
        ("customerName STRING", [("Ann",), ("x" * 100,)], [P, P]),
        ("customerName STRING", [("Al",), ("x" * 101,)], [F, F]),
    ],
    "s000_06_value_checks.ttl": [
        ("riskWeight DECIMAL(5,2)", [(D("0.00"),), (D("100.00"),), (D("12.50"),)], [P, P, P]),
        ("riskWeight DECIMAL(5,2)", [(D("-1.00"),), (D("100.50"),)], [F, F, F]),
    ],
}

# Blocks that show a rule out of its context (a property's `quality` list without the property)
# or a template with placeholders: refused, with the reason (exit 2).
REFUSED = {
    "s003_00_quality_type_library.yaml": "nullValues must be declared on a property",
    "s003_01_quality_type_same.yaml": "nullValues must be declared on a property",
    "s003_06_duplicate_values_property.yaml": (
        "schema-level duplicateValues needs arguments.properties"
    ),
    "s003_10_verb_quality_type_library.yaml": "hasNoNullValues must be declared on a property",
    "s003_11_verb_quality_type_same.yaml": "hasNoNullValues must be declared on a property",
    "s002_00_engine_dictionary_format.json": "invalid JSON",
}
NOT_CONTRACTS = {  # Python blocks: the context configuration, and DataHub's output structure
    "s000_03_context_configuration.py.txt",
    "s000_07_datahub_assertion_structure.py.txt",
}


def test_every_example_block_is_covered() -> None:
    files = {p.name for p in EXAMPLES.iterdir()}
    assert files == set(CASES) | set(REFUSED) | NOT_CONTRACTS


def _check(contract: Path, data: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    args = ["check", "--contract", str(contract), "--dataset", str(data), "--output", "json"]
    if contract.suffix == ".ttl":
        args.append("--shacl-assertions")
    code = main(args)
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


def _write(spark: Any, folder: Path, ddl: str, rows: Data) -> Path:
    df = rows(spark).toDF(*[c.split()[0] for c in ddl.split(",")]) if callable(rows) else None
    if df is None:
        df = spark.createDataFrame(rows, ddl)
    df.coalesce(1).write.parquet(str(folder))
    return folder


def _status(result: dict[str, Any]) -> str:
    return E if result["code"] == "EVALUATION_ERROR" else result["status"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_through_check(
    name: str, spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: dict[str, set[str]] = {}
    for i, (ddl, rows, expected) in enumerate(CASES[name]):
        data = _write(spark, tmp_path / f"data{i}", ddl, rows)
        code, report = _check(EXAMPLES / name, data, capsys)
        got = [_status(r) for r in report["results"]]
        assert got == expected, (
            i,
            [(r["rule_id"], r["status"], r["message"]) for r in report["results"]],
        )
        assert code == (0 if set(expected) <= {P, S} else 1)
        for r in report["results"]:
            seen.setdefault(r["rule_id"], set()).add(_status(r))
    # each rule of the example passed once and failed once (a real failure, not an error)
    assert all({P, F} <= statuses for statuses in seen.values()), seen


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_example_refused_with_its_reason(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", "--contract", str(EXAMPLES / name), "--dataset", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert REFUSED[name] in err
    assert name in err  # the file, and where in it
    if "must be declared on a property" in REFUSED[name]:
        assert "put it under `properties: - name: <column>`" in err


# The same blocks in their context: `check --column` names the property a bare `quality:` list
# belongs to, and the block is used as written.
NULLS = [
    ("email STRING", [("a@x.org",), ("b@x.org",)], [P, P]),
    ("email STRING", [("a@x.org",), (None,)], [P, F]),
    ("other INT", [(1,)], [F, E]),
]
IN_CONTEXT: dict[str, tuple[str, list[tuple[str, Data, list[str]]]]] = {
    "s003_00_quality_type_library.yaml": ("email", NULLS),
    "s003_01_quality_type_same.yaml": ("email", NULLS),
    "s003_10_verb_quality_type_library.yaml": ("email", NULLS),
    "s003_11_verb_quality_type_same.yaml": ("email", NULLS),
    "s003_06_duplicate_values_property.yaml": (
        "order_id",
        [
            ("order_id INT", [(i,) for i in range(200)], [P, P, P, P]),
            # 20 extra occurrences of one id in 100 rows: 20 duplicates, 20 %
            ("order_id INT", [(i,) for i in range(80)] + [(1,)] * 20, [P, F, F, F]),
            ("other INT", [(1,)], [F, E, E, E]),
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(IN_CONTEXT))
def test_a_property_block_with_its_column(
    name: str, spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    column, cases = IN_CONTEXT[name]
    seen: dict[str, set[str]] = {}
    for i, (ddl, rows, expected) in enumerate(cases):
        data = _write(spark, tmp_path / f"data{i}", ddl, rows)
        args = ["check", "--contract", str(EXAMPLES / name), "--dataset", str(data)]
        code = main([*args, "--column", column, "--output", "json"])
        report = json.loads(capsys.readouterr().out)
        got = [_status(r) for r in report["results"]]
        assert got == expected, (i, report["results"])
        assert code == (0 if set(expected) <= {P, S} else 1)
        for r in report["results"]:
            seen.setdefault(r["rule_id"], set()).add(_status(r))
    assert all({P, F} <= statuses for statuses in seen.values()), seen


def test_a_column_is_only_for_a_bare_quality_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "s003_02_null_values.yaml"  # its rules are under their property already
    args = ["check", "--contract", str(EXAMPLES / name), "--dataset", str(tmp_path)]
    assert main([*args, "--column", "x"]) == 2
    assert "bare `quality:` list" in capsys.readouterr().err

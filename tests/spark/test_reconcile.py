"""Reconciliation rules (kinds/reconcile.py, evaluation/reconcile.py) through the evaluator, on
real files: a join that drops orders fails `rowCount` with both counts, `sum` and `distinct`
compare the two scans' numbers, `references` passes when every key is known and names the
missing ones' count otherwise; an input the run did not read, or two that match, is an ERROR;
the hidden rules never show; and `rowCount`/`sum` cost no Spark job beyond the two datasets'
own scans (counted, as Deequ's runner test counts them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lineage_quality.contracts import load_file
from lineage_quality.evaluation.evaluator import Evaluator
from lineage_quality.results import RuleResult, Status

pytestmark = pytest.mark.spark

ORDERS_CONTRACT = """\
apiVersion: v3.0.2
kind: DataContract
id: orders
version: 1.0.0
status: active
schema:
  - name: orders
    customProperties:
      - {property: openlineage.namespace, value: file}
      - {property: openlineage.name, value: "*/lake/orders"}
    quality:
      - {metric: rowCount, mustBeGreaterThan: 0, name: orders_not_empty}
"""

ENRICHED_CONTRACT = """\
apiVersion: v3.0.2
kind: DataContract
id: enriched
version: 1.0.0
status: active
schema:
  - name: enriched
    customProperties:
      - {property: openlineage.namespace, value: file}
      - {property: openlineage.name, value: "*/lake/enriched"}
    quality:
      - type: custom
        engine: lineage-quality
        name: every_order_kept
        implementation: {reconcile: rowCount, input: "*/lake/orders"}
        mustBe: 0
      - type: custom
        engine: lineage-quality
        name: amount_kept
        implementation: {reconcile: sum, input: "*/lake/orders", column: amount}
        mustBeBetween: [-0.5, 0.5]
        unit: percent
      - type: custom
        engine: lineage-quality
        name: customers_kept
        implementation: {reconcile: distinct, input: "*/lake/orders", column: customer_id}
        mustBe: 0
    properties:
      - name: customer_id
        quality:
          - type: custom
            engine: lineage-quality
            name: customers_known
            implementation: {reconcile: references, input: "*/lake/customers", inputColumn: id}
            mustBe: 0
"""


@pytest.fixture(scope="module")
def lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = Path(tmp_path_factory.mktemp("reconcile")) / "lake"
    orders = [(i, i % 4, float(i)) for i in range(10)]  # customer 3 has orders 3 and 7
    customers = [(0, "a"), (1, "b"), (2, "c")]  # customer 3 is missing
    spark.createDataFrame(orders, "order_id INT, customer_id INT, amount DOUBLE").write.parquet(
        str(base / "orders")
    )
    spark.createDataFrame(customers, "id INT, name STRING").write.parquet(str(base / "customers"))
    # the buggy job's inner join: orders of customer 3 dropped
    joined = spark.read.parquet(str(base / "orders")).join(
        spark.read.parquet(str(base / "customers")).withColumnRenamed("id", "customer_id"),
        "customer_id",
    )
    joined.write.parquet(str(base / "enriched"))
    # the fixed job's left join keeps every order
    spark.read.parquet(str(base / "orders")).write.parquet(str(base / "enriched_ok"))
    contracts = base.parent / "contracts"
    contracts.mkdir()
    (contracts / "orders.yaml").write_text(ORDERS_CONTRACT)
    (contracts / "enriched.yaml").write_text(ENRICHED_CONTRACT)
    return {"base": base, "contracts": contracts}


def _event(base: Path, output: str, inputs: tuple[str, ...] = ("orders", "customers")) -> Any:
    return {
        "eventType": "COMPLETE",
        "eventTime": "2099-01-01T00:00:00.000Z",  # after every file: the files as the run left
        "run": {"runId": "0190e6f0-0000-7000-8000-00000000aaaa"},
        "job": {"namespace": "spark", "name": "enrich"},
        "inputs": [{"namespace": "file", "name": str(base / n)} for n in inputs],
        "outputs": [{"namespace": "file", "name": str(base / output)}],
    }


def _evaluator(spark: Any, lake: dict[str, Any]) -> Evaluator:
    contracts = lake["contracts"]
    bindings = [*load_file(contracts / "orders.yaml"), *load_file(contracts / "enriched.yaml")]
    return Evaluator(bindings, spark=spark)


def _by_name(results: dict[Any, list[RuleResult]], role: str) -> dict[str, RuleResult]:
    return {r.rule.name or r.rule.id: r for ref, rs in results.items() if ref.role == role
            for r in rs}  # fmt: skip


def test_a_join_that_drops_orders_fails_every_order_kept_with_both_counts(
    spark: Any, lake: dict[str, Any]
) -> None:
    results = _evaluator(spark, lake).evaluate(_event(lake["base"], "enriched"))
    out = _by_name(results, "outputs")
    kept = out["every_order_kept"]
    assert kept.status is Status.FAILED and kept.actual == -2  # 8 rows of 10
    compared = dict(kept.compared or ())
    assert compared == {
        "input": f"file:{lake['base'] / 'orders'}", "inputValue": 10, "outputValue": 8,
    }  # fmt: skip
    amount = out["amount_kept"]  # 45 - (3 + 7) = 35: 22.2 % of the input's sum lost
    assert amount.status is Status.FAILED
    assert dict(amount.compared or ())["inputValue"] == 45
    assert amount.actual == pytest.approx(-100 * 10 / 45)
    assert out["customers_kept"].status is Status.FAILED  # 3 customers of 4
    assert dict(out["customers_kept"].compared or ())["outputValue"] == 3
    known = out["customers_known"]  # every customer in the output is a known one
    assert known.status is Status.PASSED and known.actual == 0
    # the hidden rules never show: the output has its 4 reconciliations and its property's
    # existence, the orders input its own rule, the customers input (no contract) nothing
    assert sorted(out) == [
        "amount_kept", "customer_id_exists", "customers_kept", "customers_known",
        "every_order_kept",
    ]  # fmt: skip
    assert sorted(_by_name(results, "inputs")) == ["orders_not_empty"]


def test_the_same_job_without_the_bug_passes(spark: Any, lake: dict[str, Any]) -> None:
    base = lake["base"]
    event = _event(base, "enriched_ok")
    event["outputs"][0]["name"] = str(base / "enriched_ok")
    # the same rules, bound to the fixed job's output; orders without a contract of its own
    fixed = lake["contracts"].parent / "enriched_ok.yaml"
    fixed.write_text(ENRICHED_CONTRACT.replace("*/lake/enriched", "*/lake/enriched_ok"))
    evaluator = Evaluator(load_file(fixed), spark=spark)
    out = _by_name(evaluator.evaluate(event), "outputs")
    assert {n: r.status for n, r in out.items() if n != "customer_id_exists"} == {
        "every_order_kept": Status.PASSED,
        "amount_kept": Status.PASSED,
        "customers_kept": Status.PASSED,
        "customers_known": Status.FAILED,  # customer 3 of the orders is nobody's
    }
    assert out["customers_known"].actual == 1


def test_an_input_the_run_did_not_read_or_two_that_match_is_an_error(
    spark: Any, lake: dict[str, Any]
) -> None:
    base = lake["base"]
    evaluator = _evaluator(spark, lake)
    out = _by_name(evaluator.evaluate(_event(base, "enriched", ("customers",))), "outputs")
    kept = out["every_order_kept"]
    assert kept.status is Status.ERROR and "read no input matching '*/lake/orders'" in (
        kept.message or ""
    )
    twice = _event(base, "enriched")
    twice["inputs"].append({"namespace": "s3://other", "name": "/lake/orders"})
    out = _by_name(evaluator.evaluate(twice), "outputs")
    assert out["every_order_kept"].status is Status.ERROR
    assert "matches 2 inputs of the run" in (out["every_order_kept"].message or "")


def test_row_count_and_sum_cost_no_job_beyond_the_datasets_own_scans(
    spark: Any, lake: dict[str, Any], tmp_path: Path
) -> None:
    """The output's and the input's scans measure the reconciliation's numbers: the same jobs
    as evaluating the two datasets' other rules, with or without the reconciliations."""
    base = lake["base"]
    plain = tmp_path / "plain.yaml"
    plain.write_text(
        ORDERS_CONTRACT.replace("id: orders", "id: plain")
        .replace("*/lake/orders", "*/lake/enriched")
        .replace("orders_not_empty", "enriched_not_empty")
    )  # fmt: skip
    counted = tmp_path / "counted.yaml"
    counted.write_text(
        ENRICHED_CONTRACT.split("    properties:")[0].replace(
            "    quality:\n", "    quality:\n      - {metric: rowCount, mustBeGreaterThan: 0}\n"
        ).replace(
            """      - type: custom
        engine: lineage-quality
        name: customers_kept
        implementation: {reconcile: distinct, input: "*/lake/orders", column: customer_id}
        mustBe: 0
""", "")
    )  # fmt: skip
    orders = load_file(lake["contracts"] / "orders.yaml")
    event = _event(base, "enriched", ("orders",))

    def jobs(bindings: list[Any], group: str) -> int:
        evaluator = Evaluator(bindings, spark=spark)
        sc = spark.sparkContext
        sc.setJobGroup(group, group)
        try:
            results = evaluator.evaluate(event)
        finally:
            sc.setLocalProperty("spark.jobGroup.id", None)
        assert all(r.status is not Status.ERROR for rs in results.values() for r in rs)
        return len(sc.statusTracker().getJobIdsForGroup(group))

    without = jobs([*orders, *load_file(plain)], "lq-reconcile-without")
    with_them = jobs([*orders, *load_file(counted)], "lq-reconcile-with")
    assert with_them == without


def test_a_delta_input_read_at_an_older_version_is_reconciled_at_that_version(
    spark: Any, lake: dict[str, Any], tmp_path: Path
) -> None:
    """Orders in Delta: version 0 holds 10 rows, version 1 15. A run that read version 0 (the
    `version` facet the listener sends for a Delta input) and wrote 10 rows passes: compared
    with version 0's 10, not the table's 15 now."""
    from lineage_quality.evaluation.session import table_format_jars

    if not any("delta-spark" in j.name for j in table_format_jars()):
        pytest.fail("the Delta jars of `make jars` are missing")
    base = tmp_path / "lake"
    schema = "order_id INT, customer_id INT, amount DOUBLE"
    rows = [(i, i % 3, float(i)) for i in range(15)]
    spark.createDataFrame(rows[:10], schema).write.format("delta").save(str(base / "orders"))
    spark.createDataFrame(rows[10:], schema).write.format("delta").mode("append").save(
        str(base / "orders")
    )
    spark.read.format("delta").option("versionAsOf", 0).load(str(base / "orders")).write.parquet(
        str(base / "enriched")
    )
    contract = tmp_path / "enriched.yaml"
    contract.write_text(ENRICHED_CONTRACT.split("    properties:")[0])
    event = _event(base, "enriched", ("orders",))
    event["inputs"][0]["facets"] = {"version": {"datasetVersion": "0"}}
    out = _by_name(Evaluator(load_file(contract), spark=spark).evaluate(event), "outputs")
    kept = out["every_order_kept"]
    assert kept.status is Status.PASSED, kept
    assert dict(kept.compared or ()) == {
        "input": f"file:{base / 'orders'}", "inputVersion": "0", "inputValue": 10,
        "outputValue": 10,
    }  # fmt: skip
    assert out["amount_kept"].status is Status.PASSED
    event["inputs"][0]["facets"] = {"version": {"datasetVersion": "1"}}  # had it read version 1
    again = _by_name(Evaluator(load_file(contract), spark=spark).evaluate(event), "outputs")
    assert again["every_order_kept"].status is Status.FAILED
    assert dict(again["every_order_kept"].compared or ())["inputValue"] == 15

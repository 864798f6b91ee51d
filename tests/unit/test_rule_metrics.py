"""Per-rule Prometheus series (issue 28.5): last value and status per (contract, object, rule),
labelled only from the contracts, and the lag from a COMPLETE's eventTime to its verdicts."""

from __future__ import annotations

import math
import time
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from lineage_quality.contracts import BoundRules, DatasetPattern
from lineage_quality.engine import verdict
from lineage_quality.engine.verdicts import value_verdict
from lineage_quality.kinds import RuleKind
from lineage_quality.producer.metrics import Metrics, lag_seconds
from lineage_quality.results import RuleResult, error_result, skipped_result
from lineage_quality.rules import Operator, Rule, Threshold, Unit
from lineage_quality.values.refs import DatasetRef

ZERO = Threshold(Operator.MUST_BE, 0)
NOT_NULL = Rule(id="id_not_null", kind=RuleKind.NULL_VALUES, columns=["id"], threshold=ZERO)
ROWS = Rule(id="rows", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0))
PERCENT = Rule(
    id="few_bad",
    kind=RuleKind.INVALID_VALUES,
    columns=["s"],
    valid_values=["a"],
    unit=Unit.PERCENT,
    threshold=Threshold(Operator.LESS_THAN, 5),
)
ORDERS = BoundRules(
    contract="orders-contract",
    object_name="orders",
    patterns=(DatasetPattern("s3://lake", "raw/orders/*"),),
    rules=(NOT_NULL, ROWS, PERCENT),
)
EVENT = {"eventType": "COMPLETE", "eventTime": "2026-11-22T06:00:00.000Z"}
EVENT_EPOCH = 1795327200.0  # 2026-11-22T06:00:00Z


def _samples(metrics: Metrics, prefix: str = "lineage_quality_rule") -> list[Any]:
    body, _ = metrics.exposition()
    return [
        sample
        for family in text_string_to_metric_families(body.decode())
        if family.name.startswith(prefix)
        for sample in family.samples
    ]


def _value(metrics: Metrics, name: str, **labels: str) -> float:
    found = [s.value for s in _samples(metrics) if s.name == name and s.labels == labels]
    assert len(found) == 1, (name, labels, found)
    return float(found[0])


def _ref(i: int) -> DatasetRef:
    return DatasetRef("inputs", 0, "s3://lake", f"raw/orders/part-{i:05d}")


def test_each_rule_of_a_contract_has_its_last_value_and_status() -> None:
    metrics = Metrics([ORDERS])
    labels = {"contract": "orders-contract", "dataset": "orders"}
    metrics.count_results(
        {_ref(0): [verdict(NOT_NULL, 0, 10), verdict(ROWS, 0, 10), verdict(PERCENT, 3, 10)]},
        EVENT,
    )
    assert _value(metrics, "lineage_quality_rule_value", **labels, rule="rows") == 10
    assert _value(metrics, "lineage_quality_rule_value", **labels, rule="few_bad") == 30.0
    status = {
        s.labels["status"]: s.value
        for s in _samples(metrics)
        if s.name == "lineage_quality_rule_status" and s.labels["rule"] == "few_bad"
    }
    assert status == {"PASSED": 0.0, "FAILED": 1.0, "ERROR": 0.0, "SKIPPED": 0.0}

    # The next verdict replaces it: an error has no value (NaN), never the old one.
    metrics.count_results({_ref(1): [error_result(PERCENT, "boom")]}, EVENT)
    assert math.isnan(_value(metrics, "lineage_quality_rule_value", **labels, rule="few_bad"))
    for name, expected in (("ERROR", 1.0), ("FAILED", 0.0)):
        value = _value(
            metrics, "lineage_quality_rule_status", **labels, rule="few_bad", status=name
        )
        assert value == expected
    stamp = _value(
        metrics, "lineage_quality_rule_evaluated_timestamp_seconds", **labels, rule="rows"
    )
    assert abs(stamp - time.time()) < 60


def test_ten_thousand_datasets_bound_by_one_glob_make_a_bounded_number_of_series() -> None:
    metrics = Metrics([ORDERS])
    results = {
        _ref(i): [verdict(NOT_NULL, i % 2, 10), value_verdict(ROWS, 10, 10)] for i in range(10_000)
    }
    metrics.count_results(results, EVENT)
    samples = _samples(metrics)
    # value + 4 statuses + timestamp, for each of the contract's rules evaluated: never per name
    assert len(samples) == 2 * (1 + 4 + 1)
    assert {s.labels["dataset"] for s in samples} == {"orders"}
    assert {s.labels["rule"] for s in samples} == {"id_not_null", "rows"}
    text = metrics.exposition()[0].decode()
    assert "part-" not in text and "raw/orders" not in text  # no event name reaches a label


def test_a_rule_no_loaded_contract_holds_gets_no_series() -> None:
    metrics = Metrics([ORDERS])
    stranger = Rule(id="stranger", kind=RuleKind.ROW_COUNT, threshold=ZERO)
    metrics.count_results({_ref(0): [verdict(stranger, 0, 1)]}, EVENT)
    assert _samples(metrics) == []
    # ... but it is counted as before
    assert _samples(metrics, "lineage_quality_assertions")


def test_equal_rules_of_two_contract_objects_keep_their_own_labels() -> None:
    twin = BoundRules(
        contract="orders-contract",
        object_name="orders_eu",
        patterns=(DatasetPattern("s3://lake", "eu/orders/*"),),
        rules=(Rule(id="rows", kind=ROWS.kind, threshold=ROWS.threshold),),
    )
    metrics = Metrics([ORDERS, twin])
    metrics.count_results({_ref(0): [verdict(twin.rules[0], 0, 4)]}, EVENT)
    assert {s.labels["dataset"] for s in _samples(metrics)} == {"orders_eu"}


def test_provisional_results_are_counted_but_are_no_rules_last_verdict() -> None:
    metrics = Metrics([ORDERS])
    timed_out = {_ref(0): [error_result(ROWS, "evaluation timed out after 1s")]}
    metrics.count_results(timed_out, EVENT, provisional=[_ref(0)])
    assert _samples(metrics) == []
    assert _value_of(metrics, "lineage_quality_evaluation_lag_seconds_count") == 0
    assert _value_of(metrics, "lineage_quality_assertions_total") == 1


def _value_of(metrics: Metrics, name: str) -> float:
    return sum(s.value for s in _samples(metrics, "lineage_quality_") if s.name == name)


def test_the_lag_runs_from_the_completes_event_time_to_the_verdicts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    metrics = Metrics([ORDERS])
    monkeypatch.setattr("lineage_quality.producer.metrics.time.time", lambda: EVENT_EPOCH + 42)
    skipped = skipped_result(NOT_NULL, "RUN_FAILED")
    metrics.count_results({_ref(0): [verdict(ROWS, 0, 3), skipped]}, EVENT)
    assert _value_of(metrics, "lineage_quality_evaluation_lag_seconds_count") == 1
    assert _value_of(metrics, "lineage_quality_evaluation_lag_seconds_sum") == 42
    assert lag_seconds({"eventTime": "2026-11-22T06:00:10Z"}, EVENT_EPOCH) == 0.0  # clock ahead
    assert lag_seconds({"eventTime": "not a time"}, EVENT_EPOCH) is None
    assert lag_seconds({}, EVENT_EPOCH) is None
    metrics.count_results({_ref(0): [verdict(ROWS, 0, 3)]})  # no event: nothing to measure from
    assert _value_of(metrics, "lineage_quality_evaluation_lag_seconds_count") == 1


def test_results_without_bindings_are_counted_as_before() -> None:
    metrics = Metrics()
    results: dict[DatasetRef, list[RuleResult]] = {_ref(0): [verdict(ROWS, 0, 3)]}
    metrics.count_results(results)
    assert _samples(metrics) == []
    assert _value_of(metrics, "lineage_quality_assertions_total") == 1

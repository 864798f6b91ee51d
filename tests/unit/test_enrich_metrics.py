"""`dataQualityMetrics` on evaluated datasets, and seed 001's `failures`/`properties` on each
assertion (issue 28.1, 28.2). Pure: results with measures in, event JSON out."""

from __future__ import annotations

import copy
import json
from typing import Any

import attrs
from openlineage.client.generated.data_quality_assertions_dataset import Assertion

from lineage_quality import rawjson
from lineage_quality.engine import verdict
from lineage_quality.engine.verdicts import value_verdict
from lineage_quality.facets import assertion_json
from lineage_quality.kinds import RuleKind
from lineage_quality.measures import ColumnMeasures, DatasetMeasures
from lineage_quality.producer.enrich import OWN_PREFIX, enrich
from lineage_quality.results import RuleResult, error_result
from lineage_quality.rules import Operator, Rule, Threshold, Unit
from lineage_quality.values.event import datasets_of
from lineage_quality.values.refs import DatasetRef
from lineage_quality.version import PRODUCER

EVENT: dict[str, Any] = {
    "eventType": "COMPLETE",
    "eventTime": "2026-11-22T06:00:00.000Z",
    "run": {"runId": "0190e6f0-0000-7000-8000-000000000001"},
    "job": {"namespace": "ns", "name": "job"},
    "inputs": [{"namespace": "file", "name": "/in"}],
    "outputs": [{"namespace": "file", "name": "/out"}],
}
ZERO = Threshold(Operator.MUST_BE, 0)
MEASURES = DatasetMeasures(
    rows=10,
    columns=(
        ("id", ColumnMeasures(nulls=1, distinct=8)),
        ("amount", ColumnMeasures(sum=2**60 + 1, min=-3, max=7.5, mean=1.25, median=2.0)),
        ("score", ColumnMeasures(stddev=0.5)),  # nothing the spec's ColumnMetrics holds
        ("ratio", ColumnMeasures(min=float("nan"), max=float("inf"))),  # no JSON form
    ),
)


def _rule(kind: RuleKind, *columns: str, **kw: Any) -> Rule:
    kw.setdefault("threshold", ZERO)
    return Rule(id=f"{kind.value}:{','.join(columns)}", kind=kind, columns=columns, **kw)


def _with(results: list[RuleResult], measures: DatasetMeasures | None) -> list[RuleResult]:
    return [attrs.evolve(r, measures=measures) for r in results]


def _results() -> list[RuleResult]:
    return _with(
        [
            verdict(_rule(RuleKind.NULL_VALUES, "id"), 1, 10),
            verdict(_rule(RuleKind.DUPLICATE_VALUES, "id"), 1, 10),
            value_verdict(_rule(RuleKind.STATISTIC, "amount", statistic="avg"), 1.25, 10),
        ],
        MEASURES,
    )


def test_an_evaluated_input_gets_the_input_metrics_facet_with_what_the_scan_measured() -> None:
    refs = datasets_of(EVENT)
    original = copy.deepcopy(EVENT)
    out = enrich(EVENT, {refs[0]: _results()})
    assert original == EVENT
    facet = out["inputs"][0]["inputFacets"]["dataQualityMetrics"]
    assert facet == {
        "_producer": PRODUCER,
        "_schemaURL": "https://openlineage.io/spec/facets/1-0-3/"
        "DataQualityMetricsInputDatasetFacet.json#/$defs/DataQualityMetricsInputDatasetFacet",
        "rowCount": 10,
        "columnMetrics": {
            "id": {"nullCount": 1, "count": 9, "distinctCount": 8},
            # an exact sum stays exact; the mean has no field in the spec (it is in `actual`)
            "amount": {"sum": 2**60 + 1, "min": -3, "max": 7.5, "quantiles": {"0.5": 2.0}},
        },
    }
    # the JSON the producer forwards: every number as it was, nothing non-finite
    text = rawjson.dumps(out)
    assert json.loads(text)["inputs"][0]["inputFacets"]["dataQualityMetrics"] == facet
    assert "dataQualityMetrics" not in (out["inputs"][0].get("facets") or {})


def test_an_evaluated_output_gets_the_dataset_facet_with_the_complete_as_capture_date() -> None:
    refs = datasets_of(EVENT)
    out = enrich(EVENT, {refs[1]: _results()})
    facet = out["outputs"][0]["facets"]["dataQualityMetrics"]
    assert facet["_schemaURL"].startswith(
        "https://openlineage.io/spec/facets/1-0-1/DataQualityMetricsDatasetFacet.json"
    )
    assert facet["captureDate"] == EVENT["eventTime"]
    assert facet["rowCount"] == 10
    assert facet["columnMetrics"]["id"] == {"nullCount": 1, "count": 9, "distinctCount": 8}
    assert "inputFacets" not in out["outputs"][0]


def test_a_malformed_event_time_costs_only_the_capture_date() -> None:
    event = {**copy.deepcopy(EVENT), "eventTime": "yesterday"}
    out = enrich(event, {datasets_of(event)[1]: _results()})
    facet = out["outputs"][0]["facets"]["dataQualityMetrics"]
    assert "captureDate" not in facet and facet["rowCount"] == 10


def test_no_metrics_facet_without_a_scan_nor_from_two_scans() -> None:
    refs = datasets_of(EVENT)
    plain = [verdict(_rule(RuleKind.NULL_VALUES, "id"), 1, 10)]  # no measures: nothing scanned
    other = attrs.evolve(MEASURES, rows=11)  # another scan's numbers: never mixed with the first
    mixed = [*_results(), *_with([verdict(_rule(RuleKind.ROW_COUNT), 0, 11)], other)]
    out = enrich(EVENT, {refs[0]: plain, refs[1]: mixed})
    assert "dataQualityMetrics" not in out["inputs"][0]["inputFacets"]
    assert "dataQualityMetrics" not in out["outputs"][0]["facets"]
    assert "dataQualityAssertions" in out["outputs"][0]["facets"]


def test_a_result_made_afresh_after_the_scan_keeps_the_datasets_metrics() -> None:
    # A history rule judged against the past (or skipped for want of it) is a new result without
    # the scan's numbers; the other results still stand for the scan.
    rebuilt = error_result(_rule(RuleKind.ROW_COUNT), "no history store: serve --history")
    out = enrich(EVENT, {datasets_of(EVENT)[0]: [*_results(), rebuilt]})
    assert out["inputs"][0]["inputFacets"]["dataQualityMetrics"]["rowCount"] == 10


def test_another_producers_metrics_facet_is_kept_and_ours_goes_beside_it() -> None:
    event = copy.deepcopy(EVENT)
    theirs = {"_producer": "someone", "_schemaURL": "x", "rowCount": 3, "columnMetrics": {}}
    event["inputs"][0]["inputFacets"] = {"dataQualityMetrics": copy.deepcopy(theirs)}
    out = enrich(event, {datasets_of(event)[0]: _results()})
    facets = out["inputs"][0]["inputFacets"]
    assert facets["dataQualityMetrics"] == theirs
    assert facets[OWN_PREFIX + "dataQualityMetrics"]["rowCount"] == 10
    again = enrich(out, {datasets_of(out)[0]: _results()})  # ours from an earlier pass: replaced
    assert again["inputs"][0]["inputFacets"] == facets


def test_counting_assertions_carry_top_level_failures_and_every_one_its_properties() -> None:
    between = Threshold(Operator.BETWEEN, 1, 5)
    counted = verdict(
        _rule(
            RuleKind.INVALID_VALUES,
            "status",
            valid_values=["a"],
            threshold=Threshold(Operator.LESS_THAN, 5),
            unit=Unit.PERCENT,
            severity="warning",
            source="/srv/secret/contracts/orders.yaml: schema[0].properties[1].quality[0]",
        ),
        3,
        10,
    )
    rows = verdict(_rule(RuleKind.ROW_COUNT, threshold=between, action="log"), 0, 10)
    stat = value_verdict(_rule(RuleKind.STATISTIC, "amount", statistic="max"), 7.5, 10)
    extra = verdict(_rule(RuleKind.EXTRA_COLUMNS, valid_values=["a"]), 2, 3)
    a, r, s, x = (assertion_json(res) for res in (counted, rows, stat, extra))
    # rows that failed, for rules that count rows; `params` keeps its own copy as before
    assert a["failures"] == 3 == a["params"]["failures"] and a["actual"] == "30%"
    assert a["properties"] == {
        "ruleId": "invalidValues:status",
        "metric": "invalidValues",
        "threshold": {"mustBeLessThan": 5},
        "unit": "percent",
        "action": "ALERT",
        "actionFrom": "severity",
        "severity": "warning",
        "origin": "odcs",
        "declaredAt": "orders.yaml: schema[0].properties[1].quality[0]",  # not the folder
    }
    assert "failures" not in r and "failures" not in s and "failures" not in x
    assert r["properties"]["threshold"] == {"mustBeBetween": [1, 5]}
    assert (r["properties"]["action"], r["properties"]["actionFrom"]) == ("LOG", "declared")
    assert s["properties"]["actionFrom"] == "default" and "severity" not in s["properties"]


def test_the_spec_class_still_lacks_the_seed_fields_we_add() -> None:
    # When openlineage-python's Assertion gains them, its own values win (assertion_json uses
    # setdefault) and this test says the workaround can go.
    names = {f.name for f in attrs.fields(Assertion)}
    assert not {"failures", "properties"} & names


def test_forwarded_events_carry_both_facets_on_each_evaluated_dataset() -> None:
    refs = datasets_of(EVENT)
    results: dict[DatasetRef, list[RuleResult]] = {refs[0]: _results(), refs[1]: _results()}
    out = json.loads(rawjson.dumps(enrich(EVENT, results)))
    for ds, where in ((out["inputs"][0], "inputFacets"), (out["outputs"][0], "facets")):
        facets = ds[where]
        assert {"dataQualityAssertions", "dataQualityMetrics"} <= set(facets)
        counting = [a for a in facets["dataQualityAssertions"]["assertions"] if "failures" in a]
        assert [a["failures"] for a in counting] == [1, 1]

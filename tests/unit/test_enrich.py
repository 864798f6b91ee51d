import copy
import json

from lineage_quality.engine import verdict
from lineage_quality.kinds import RuleKind
from lineage_quality.producer.enrich import enrich
from lineage_quality.results import RuleResult, Status, error_result
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.event import datasets_of
from lineage_quality.values.refs import DatasetRef
from lineage_quality.version import PRODUCER

EVENT = {
    "eventType": "COMPLETE",
    "eventTime": "2026-11-22T06:00:00.000Z",
    "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/spark",
    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    "run": {"runId": "0190e6f0-0000-7000-8000-000000000001", "facets": {"spark_version": {"x": 1}}},
    "job": {"namespace": "ns", "name": "job.write"},
    "inputs": [{"namespace": "file", "name": "/in", "facets": {"schema": {"fields": []}}}],
    "outputs": [{"namespace": "file", "name": "/out", "facets": {"schema": {"fields": []}}}],
}


def results() -> tuple[RuleResult, RuleResult, RuleResult]:
    nulls = Rule(
        id="n",
        kind=RuleKind.NULL_VALUES,
        columns=["a"],
        severity="ERROR",
        threshold=Threshold(Operator.MUST_BE, 0),
        name="a_not_null",
    )
    rows = Rule(id="r", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0))
    return verdict(nulls, 0, 5), verdict(nulls, 2, 5), error_result(rows, "boom")


def test_outputs_get_facets_inputs_get_input_facets_and_run_gets_test_facet() -> None:
    ok, bad, err = results()
    refs = datasets_of(EVENT)
    assert refs == [
        DatasetRef("inputs", 0, "file", "/in"),
        DatasetRef("outputs", 0, "file", "/out"),
    ]
    original = copy.deepcopy(EVENT)
    out = enrich(EVENT, {refs[0]: [ok], refs[1]: [bad, err]})
    assert original == EVENT  # the input event is never modified

    inp = out["inputs"][0]["inputFacets"]["dataQualityAssertions"]
    assert inp["_schemaURL"].startswith("https://openlineage.io/spec/facets/1-1-0/")
    assert inp["assertions"] == [
        {
            "assertion": "not_null",
            "success": True,
            "column": "a",
            "severity": "error",
            "name": "a_not_null",
            "expected": "== 0",
            "actual": "0",
            "params": {
                "metric": "nullValues",
                "unit": "rows",
                "action": "BLOCK",
                "origin": "odcs",
                "ruleId": "n",
                "status": "PASSED",
                "failures": 0,
                "rowCount": 5,
            },
            # seed 001's fields beside the spec class's (facets/assertions.py)
            "failures": 0,
            "properties": {
                "ruleId": "n",
                "metric": "nullValues",
                "threshold": {"mustBe": 0},
                "unit": "rows",
                "action": "BLOCK",
                "actionFrom": "severity",
                "severity": "ERROR",
                "origin": "odcs",
            },
        }
    ]
    outp = out["outputs"][0]["facets"]["dataQualityAssertions"]["assertions"]
    assert [a["success"] for a in outp] == [False, False]
    assert outp[1]["params"]["status"] == "ERROR" and outp[1]["params"]["error"] == "boom"
    assert "actual" not in outp[1]  # an error has no measurement, and is never a pass
    tests = out["run"]["facets"]["test"]["tests"]
    assert [(t["status"], t["params"]["dataset"]) for t in tests] == [
        ("pass", "file:/in"),
        ("fail", "file:/out"),
        ("fail", "file:/out"),
    ]
    # everything else is as it came
    for key in ("eventType", "eventTime", "producer", "schemaURL", "job"):
        assert out[key] == EVENT[key]
    assert out["run"]["facets"]["spark_version"] == {"x": 1}
    assert out["outputs"][0]["facets"]["schema"] == {"fields": []}


def test_no_results_leaves_the_event_json_equal() -> None:
    out = enrich(EVENT, {})
    assert json.dumps(out, sort_keys=True) == json.dumps(EVENT, sort_keys=True)


def test_another_producers_facets_are_kept_and_never_credited_with_our_results() -> None:
    ok, _, _ = results()
    event = copy.deepcopy(EVENT)
    theirs = {
        "_producer": "dbt",
        "_schemaURL": "x",
        "assertions": [{"assertion": "unique", "success": True}],
    }
    their_tests = {"_producer": "dbt", "_schemaURL": "y", "tests": [{"name": "t"}]}
    event["outputs"][0]["facets"]["dataQualityAssertions"] = copy.deepcopy(theirs)
    event["run"]["facets"] = {"test": copy.deepcopy(their_tests)}
    out = enrich(event, {DatasetRef("outputs", 0, "file", "/out"): [ok]})
    facets = out["outputs"][0]["facets"]
    assert facets["dataQualityAssertions"] == theirs  # untouched: nothing of ours under dbt
    ours = facets["lineageQuality_dataQualityAssertions"]
    assert ours["_producer"] == PRODUCER
    assert ours["_schemaURL"].startswith("https://openlineage.io/spec/facets/1-1-0/")
    assert [a["assertion"] for a in ours["assertions"]] == ["not_null"]
    assert out["run"]["facets"]["test"] == their_tests
    assert out["run"]["facets"]["lineageQuality_test"]["_producer"] == PRODUCER
    # Our own facet from an earlier pass (a late follow-up) is replaced, not duplicated.
    again = enrich(out, {DatasetRef("outputs", 0, "file", "/out"): [ok]})
    again_ours = again["outputs"][0]["facets"]["lineageQuality_dataQualityAssertions"]
    assert [a["assertion"] for a in again_ours["assertions"]] == ["not_null"]
    assert again["outputs"][0]["facets"]["dataQualityAssertions"] == theirs


def test_sql_rules_carry_their_query_and_severities_use_the_spec_words() -> None:
    from lineage_quality.facets import assertions_facet, to_json_dict

    sql = Rule(
        id="q",
        kind=RuleKind.SQL,
        query="SELECT 1",
        severity="Warning",
        threshold=Threshold(Operator.MUST_BE, 1),
    )
    result = RuleResult(rule=sql, status=Status.PASSED, actual=1.0)
    (a,) = to_json_dict(assertions_facet([result]))["assertions"]
    assert (a["content"], a["contentType"], a["severity"]) == ("SELECT 1", "sql", "warn")


def test_the_facets_one_event_gains_are_bounded_and_what_is_left_out_is_an_error() -> None:
    """Issue 44: nothing bounded what one event could grow to (28 KB forwarded as 67 MB)."""
    ok, bad, err = results()
    event = copy.deepcopy(EVENT)
    event["inputs"] = [{"namespace": "file", "name": f"/in{i}"} for i in range(50)]
    refs = datasets_of(event)[:50]
    everything = {ref: [ok, bad, err] for ref in refs}
    whole = len(json.dumps(enrich(event, everything)))
    bound = 20_000
    out = enrich(event, everything, max_added_bytes=bound)
    # our facets, markers included, stay within the bound (json.dumps adds spaces: +15 %)
    assert len(json.dumps(out)) - len(json.dumps(event)) < bound * 1.15
    kept = [
        i for i in out["inputs"] if "inputFacets" in i and i["inputFacets"][
            "dataQualityAssertions"]["assertions"][0]["assertion"] != "facetsLeftOut"
    ]  # fmt: skip
    left = [i for i in out["inputs"] if i not in kept and "inputFacets" in i]
    unmarked = [i for i in out["inputs"] if "inputFacets" not in i]
    assert 0 < len(kept) < 50 and len(left) > 0 and len(unmarked) > 0 and whole > 3 * bound
    assert len(kept) + len(left) + len(unmarked) == 50
    gone = left[0]["inputFacets"]["dataQualityAssertions"]["assertions"]
    assert gone[0]["success"] is False and gone[0]["params"]["status"] == "ERROR"
    error = gone[0]["params"]["error"]
    assert "left out" in error and left[0]["name"] in error
    tests = out["run"]["facets"]["test"]["tests"]
    assert sum(t["name"] == "facetsLeftOut" for t in tests) == len(left) + 1
    assert f"the facets of {len(unmarked)} more dataset(s)" in tests[-1]["params"]["error"]
    assert sum(t["name"] == "a_not_null" for t in tests) == 2 * len(kept)

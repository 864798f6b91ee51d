"""An order statistic (min, max, median) of a masked column is one row's value: judged raw, shown
masked in every output (masked_values.py; docs/rules.md, "Failing-row samples"). Pure: verdicts
in, facets, DataHub aspects, check's JSON and table, alerts, metrics and the view out."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import attrs
import pytest

from lineage_quality.contracts.odcs import parse_odcs
from lineage_quality.engine.verdicts import value_verdict
from lineage_quality.facets import assertion_json
from lineage_quality.history.judge import judge_and_record
from lineage_quality.history.store import open_history
from lineage_quality.history.verdict_json import results_of, results_text
from lineage_quality.history.verdicts import history_verdict
from lineage_quality.kinds import RuleKind
from lineage_quality.masked_values import VALUE_TERMS, masked_column, masked_results
from lineage_quality.measures import ColumnMeasures, DatasetMeasures
from lineage_quality.producer.alerts import alerts_for, slack_message
from lineage_quality.producer.enrich import enrich
from lineage_quality.report import to_json, to_table
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.rules.history import parse_history
from lineage_quality.samples import HASH_PREFIX, REDACTED, Masking, SamplePolicy, Sampling
from lineage_quality.values.event import Event
from lineage_quality.values.refs import DatasetRef

POLICY = SamplePolicy(
    masks=(("salary", Masking.HASH), ("age", Masking.REDACT), ("nickname", Masking.SHOW))
)
SAMPLING = Sampling(POLICY, key=b"k" * 32)
RAW = {"min": 123457, "max": 987653, "median": 555555.5}
NOW_MS = int(time.time() * 1000)
DATASET = "file:/lake/people"
REF = DatasetRef("outputs", 0, "file", "/lake/people")
EVENT = {
    "eventType": "COMPLETE",
    "eventTime": "2026-11-22T06:00:00.000Z",
    "run": {"runId": "run-1"},
    "job": {"namespace": "ns", "name": "job"},
    "outputs": [{"namespace": "file", "name": "/lake/people"}],
}


def stat(statistic: str, column: str = "salary", **kw: Any) -> Rule:
    kw.setdefault("threshold", Threshold(Operator.LESS_THAN, 500000))
    return Rule(
        id=f"{column}_{statistic}",
        kind=RuleKind.STATISTIC,
        columns=(column,),
        statistic=statistic,
        **kw,
    )


def spelled(value: float) -> list[str]:
    """The ways an output could write `value`."""
    return [str(value), f"{value:.6g}", f"{value:g}", repr(float(value))]


def outputs(results: list[RuleResult]) -> str:
    """Every output of the results, as one text: the facets (enriched event), check's JSON and
    table, the alert and its Slack message."""
    event = enrich(EVENT, {REF: results})
    (alert,) = alerts_for(EVENT, {REF: results}) or [None]
    shown = [json.dumps(event), json.dumps(to_json("people", results)), to_table("people", results)]
    if alert is not None:
        shown += [json.dumps(alert.payload), json.dumps(slack_message(alert.payload))]
    return "\n".join(shown)


@pytest.mark.parametrize("statistic", ["min", "max", "median"])
def test_an_order_statistic_of_a_hashed_column_is_judged_raw_and_shown_as_its_hash(
    statistic: str,
) -> None:
    raw = value_verdict(stat(statistic), RAW[statistic], 10)
    (shown,) = masked_results([raw], SAMPLING)
    assert raw.status is (Status.PASSED if RAW[statistic] < 500000 else Status.FAILED)
    assert shown.status is raw.status and shown.success is raw.success
    digest = SAMPLING.shown("salary", RAW[statistic])
    assert digest is not None and digest.startswith(HASH_PREFIX) and len(digest) == 5 + 16
    assert (shown.actual, shown.observed, shown.actual_text()) == (None, digest, digest)
    assert assertion_json(shown)["actual"] == digest  # the facet's `actual`: a string
    (checked,) = to_json("people", [shown])["results"]
    assert checked["actual"] == digest and checked["status"] == raw.status.value
    text = outputs([shown])
    assert digest in text
    for form in spelled(RAW[statistic]):
        assert form not in text


def test_a_redacted_column_shows_stars_and_equal_values_hash_alike() -> None:
    (redacted,) = masked_results([value_verdict(stat("max", "age"), 97, 10)], SAMPLING)
    assert redacted.actual_text() == REDACTED and redacted.actual is None
    first = masked_results([value_verdict(stat("max"), 987653, 10)], SAMPLING)[0]
    other = masked_results([value_verdict(stat("min"), 987653, 4)], SAMPLING)[0]
    assert first.observed == other.observed  # one key: equal values, equal hashes
    (small,) = masked_results([value_verdict(stat("max"), 5, 1)], SAMPLING)
    assert first.observed != small.observed


def test_aggregates_of_many_rows_and_shown_columns_keep_their_numbers() -> None:
    kept = [
        value_verdict(stat("avg"), 543210.25, 10),
        value_verdict(stat("sum"), 5432102, 10),
        value_verdict(stat("stddev"), 1234.5, 10),
        value_verdict(stat("max", "nickname"), 42, 10),  # the explicit opt-in
        value_verdict(stat("max", "city"), 77, 10),  # not classified
    ]
    shown = masked_results(kept, SAMPLING)
    assert shown == kept
    assert [r.actual for r in shown] == [543210.25, 5432102, 1234.5, 42, 77]
    assert "543210" in outputs(shown)


def test_a_contract_classifying_a_column_masks_its_max_not_its_avg() -> None:
    contract = """apiVersion: v3.0.2
kind: DataContract
id: people
version: 1.0.0
status: active
schema:
  - name: people
    properties:
      - name: salary
        classification: restricted
        quality:
          - {metric: max, mustBeLessThan: 500000, name: salary_max}
          - {metric: avg, mustBeGreaterThan: 0, name: salary_avg}
      - name: bonus
        quality:
          - {metric: max, mustBeLessThan: 500000, name: bonus_max}
"""
    (bound,) = parse_odcs(contract, "people.yaml")
    masked = {r.name: masked_column(r, bound.samples) for r in bound.rules if r.statistic}
    assert masked == {"salary_max": "salary", "salary_avg": None, "bonus_max": None}


SALARY = ColumnMeasures(nulls=1, sum=5432102, min=123457, max=987653, mean=5.4e5, median=555555.5)
MEASURES = DatasetMeasures(
    rows=10,
    columns=(
        ("salary", SALARY),
        ("age", ColumnMeasures(min=18, max=97531)),  # nothing left once masked
        ("bonus", ColumnMeasures(nulls=0, min=3, max=900, median=40.0)),
    ),
)


def test_the_scan_measures_lose_a_masked_columns_min_max_and_median() -> None:
    results = [
        attrs.evolve(value_verdict(stat("avg"), 5.4e5, 10), measures=MEASURES),
        attrs.evolve(value_verdict(stat("max"), 987653, 10), measures=MEASURES),
    ]
    shown = masked_results(results, SAMPLING)
    assert shown[0].measures is shown[1].measures  # still one scan's numbers (enrich tells)
    assert shown[0].measures is not None
    assert dict(shown[0].measures.columns) == {
        "salary": ColumnMeasures(nulls=1, sum=5432102, mean=5.4e5),
        "bonus": MEASURES.columns[2][1],
    }
    event = enrich(EVENT, {REF: shown})
    metrics = event["outputs"][0]["facets"]["dataQualityMetrics"]["columnMetrics"]
    assert metrics["salary"] == {"nullCount": 1, "count": 9, "sum": 5432102}
    assert metrics["bonus"] == {"nullCount": 0, "count": 10, "min": 3, "max": 900,
                                "quantiles": {"0.5": 40.0}}  # fmt: skip
    assert "age" not in metrics
    text = json.dumps(event)
    for raw in (123457, 987653, 555555.5, 97531):
        assert all(form not in text for form in spelled(raw))


def test_masking_twice_or_after_the_reuse_store_changes_nothing() -> None:
    rule = stat("max")
    measured = attrs.evolve(value_verdict(rule, 987653, 10), measures=MEASURES)
    once = masked_results([measured], SAMPLING)
    assert masked_results(once, SAMPLING) == once
    back = results_of(results_text(once), [rule])
    assert back is not None and masked_results(back, SAMPLING) == back == once
    # a verdict kept raw (before the column was classified) is masked on its way out
    raw = results_of(results_text([value_verdict(rule, 987653, 10)]), [rule])
    assert raw is not None and masked_results(raw, SAMPLING) == masked_results(once, SAMPLING)


def test_metrics_export_no_number_for_a_masked_value() -> None:
    from lineage_quality.contracts import BoundRules, DatasetPattern
    from lineage_quality.producer.metrics import Metrics

    rules = (stat("max"), stat("avg"))
    bound = BoundRules("people", "people", (DatasetPattern("file", "/lake/*"),), rules=rules)
    metrics = Metrics([bound])
    shown = masked_results(
        [value_verdict(rules[0], 987653, 10), value_verdict(rules[1], 5.4e5, 10)], SAMPLING
    )
    metrics.count_results({REF: shown}, EVENT)
    body = metrics.exposition()[0].decode()
    values = {
        line.split('rule="')[1].split('"')[0]: float(line.rsplit(" ", 1)[1])
        for line in body.splitlines()
        if line.startswith("lineage_quality_rule_value{")
    }
    assert math.isnan(values["salary_max"]) and values["salary_avg"] == 5.4e5
    assert "987653" not in body and "9.87653e+05" not in body


STDDEV = parse_history({"compare": "stddev", "runs": 3, "minRuns": 2, "minHistory": 2})
CHANGE = parse_history({"compare": "absoluteChange"})


def judged_runs(store: Any, rule: Rule, values: list[float]) -> list[RuleResult]:
    """Each value judged against the runs before it and kept, as serve does, then masked."""
    out = []
    for i, value in enumerate(values):
        at = NOW_MS - (len(values) - i) * 3_600_000
        raw = [value_verdict(rule, value, 10)]
        judged = judge_and_record(store, DATASET, f"run-{i}", at, raw, masking=SAMPLING)
        out.extend(masked_results(judged, SAMPLING))
    return out


def test_a_history_band_on_a_masked_max_is_judged_raw_and_its_numbers_shown_masked(
    tmp_path: Path,
) -> None:
    rule = stat("max", history=STDDEV, threshold=Threshold(Operator.MUST_BE, 0))
    values = [731411, 731421, 731431, 987653]
    store = open_history(tmp_path / "h.db")
    try:
        *_, last = judged_runs(store, rule, values)
        points = store.series(DATASET, rule.id)
    finally:
        store.close()
    assert last.status is Status.FAILED  # 987653 is far outside the band of the others
    digest = SAMPLING.shown("salary", 987653)
    assert (last.actual, last.measured, last.observed) == (None, None, digest)
    baseline = dict(last.baseline or ())
    for key in ("mean", "lower", "upper"):
        assert str(baseline[key]).startswith(HASH_PREFIX), key
    assert baseline["stddev"] == pytest.approx(10.0) and baseline["n"] == 3
    assert last.expected.startswith("between hmac:")
    assert last.expected.endswith("(within 3 sd of the last 3 runs)")
    text = outputs([last])
    assert digest in text
    for raw in (*values, 731421.0, 731451.0, 731391.0):  # the values, the mean, the band ends
        assert all(form not in text for form in spelled(raw)), raw
    # the store keeps the raw values (the next baselines need them) and the text to show
    assert [p.value for p in points] == values
    assert [p.shown for p in points] == [SAMPLING.shown("salary", v) for v in values]


def test_a_change_of_a_masked_max_keeps_the_change_and_masks_the_previous_value(
    tmp_path: Path,
) -> None:
    rule = stat("max", history=CHANGE, threshold=Threshold(Operator.LESS_THAN, 100))
    store = open_history(tmp_path / "h.db")
    try:
        *_, last = judged_runs(store, rule, [987653, 987700])
    finally:
        store.close()
    assert last.status is Status.PASSED and last.actual == 47  # a change: no row's value
    baseline = dict(last.baseline or ())
    assert baseline["previous"] == SAMPLING.shown("salary", 987653) and last.measured is None
    assert last.expected == "change from the previous run < 100"
    text = outputs([last])
    assert "987653" not in text and "987700" not in text


def test_every_number_a_history_verdict_compares_with_is_masked_or_no_rows_value() -> None:
    """A new entry in the value's terms must join VALUE_TERMS (masked_values.py)."""
    from lineage_quality.history.points import Point

    rule = stat("max", history=STDDEV, threshold=Threshold(Operator.MUST_BE, 0))
    change = stat("max", history=CHANGE, threshold=Threshold(Operator.LESS_THAN, 100))
    past = [Point(f"r{i}", NOW_MS - (5 - i) * 1000, 1000.0 + i, "PASSED") for i in range(4)]
    past.append(Point("r4", NOW_MS - 1000, 9e9, "FAILED"))  # left out of the band: listed
    not_values = {"n", "stddev", "runs", "needed", "sameValueRuns", "leftOutCount"}
    for r in (rule, change):
        judged = history_verdict(value_verdict(r, 1003, 10), past, NOW_MS)
        for key, value in judged.baseline or ():
            if isinstance(value, int | float) and not isinstance(value, bool):
                assert key in VALUE_TERMS or key in not_values, key
        shown = masked_results([judged], SAMPLING)[0]
        assert "9000000000" not in json.dumps(assertion_json(shown))
        assert "1003" not in json.dumps(assertion_json(shown))


def test_datahub_run_events_carry_the_masked_text_never_the_number(tmp_path: Path) -> None:
    pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")
    from datahub.emitter.mcp import MetadataChangeProposalWrapper
    from datahub.metadata.schema_classes import AssertionResultTypeClass, AssertionRunEventClass

    from lineage_quality.datahub.run_events import run_event

    band = stat("max", history=STDDEV, threshold=Threshold(Operator.MUST_BE, 0))
    store = open_history(tmp_path / "h.db")
    try:
        *_, history = judged_runs(store, band, [731411, 731421, 731431, 987653])
    finally:
        store.close()
    plain = masked_results([value_verdict(stat("max"), 987653, 10)], SAMPLING)[0]
    avg = masked_results([value_verdict(stat("avg"), 543210.25, 10)], SAMPLING)[0]
    dataset = "urn:li:dataset:(urn:li:dataPlatform:file,/lake/people,PROD)"
    digest = SAMPLING.shown("salary", 987653)
    for result in (plain, history, avg):
        urn = f"urn:li:assertion:{result.rule.id}"
        aspect = run_event(result, urn, dataset, "run-1", 1795327200000)
        mcp = MetadataChangeProposalWrapper(entityUrn=urn, aspect=aspect)
        assert mcp.validate()
        back = MetadataChangeProposalWrapper.from_obj(json.loads(json.dumps(mcp.to_obj())))
        got = back.aspect
        assert isinstance(got, AssertionRunEventClass) and got.result is not None
        native = got.result.nativeResults or {}
        if result is avg:  # an aggregate: its number, as before
            assert got.result.actualAggValue == 543210.25 and native["actual"] == "543210"
            continue
        assert got.result.type == AssertionResultTypeClass.FAILURE  # the raw verdict
        assert got.result.actualAggValue is None
        assert native["actual"] == digest and "actualValue" not in native
        assert "measured" not in native
        text = json.dumps(mcp.to_obj())
        for raw in (987653, 731421.0, 731451.0, 731391.0):
            assert all(form not in text for form in spelled(raw)), raw


def test_the_view_and_the_history_command_show_a_masked_value_as_its_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lineage_quality.cli.main import main
    from lineage_quality.view import data, pages
    from lineage_quality.view.data import Links
    from lineage_quality.view.open import open_stores
    from view_store import Filler, event

    where = tmp_path / "history.db"
    filler = Filler(where)
    band = stat("max", history=STDDEV, threshold=Threshold(Operator.MUST_BE, 0))
    values = [731411, 731421, 731431, 987653]
    plain = stat("avg", threshold=Threshold(Operator.GREATER_THAN, 0))
    for i, value in enumerate(values):
        at = NOW_MS - (len(values) - i) * 3_600_000
        raw = [value_verdict(band, value, 10), value_verdict(plain, 5.4e5 + i, 10)]
        judged = judge_and_record(filler.history, DATASET, f"run-{i}", at, raw, masking=SAMPLING)
        ev = event(f"run-{i}", at, "ingest", [], {"/lake/people": ["salary"]})
        filler.keeper.keep(ev, {REF: masked_results(judged, SAMPLING)})
    filler.close()
    stores = open_stores(where, Links(None, None))
    doc = data.dataset(stores, DATASET)
    run = data.run(stores, "run-3")
    assert doc is not None and run is not None
    rules = {r["rule"]: r["history"] for r in doc["rules"]}
    digest = SAMPLING.shown("salary", 987653)
    last = rules[band.id][-1]
    assert (last["value"], last["masked"]) == (None, digest)
    assert (last["lower"], last["upper"]) == (None, None)  # the band is in the value's terms
    assert last["status"] == "FAILED"
    assert rules[plain.id][-1]["value"] == 5.4e5 + 3 and rules[plain.id][-1]["masked"] is None
    (wrote,) = run["wrote"]
    kept = {a["rule"]: a for a in wrote["assertions"]}
    assert kept[band.id]["masked"] == digest and kept[band.id]["value"] is None
    page = pages.dataset_page(doc, pages.points_of(doc)) + pages.run_page(run)
    assert digest in page and 'class="masked"' in page
    assert main(["history", "--history", str(where), "--dataset", DATASET, "--rule", band.id,
                 "--plot", str(tmp_path / "chart.svg")]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert digest in printed
    text = "\n".join([json.dumps(doc), json.dumps(run), page, printed,
                      (tmp_path / "chart.svg").read_text()])  # fmt: skip
    for raw in (*values, 731421.0, 731451.0, 731391.0):
        assert all(form not in text for form in spelled(raw)), raw


def test_the_evaluator_keeps_the_raw_value_and_hands_on_the_masked_one(tmp_path: Path) -> None:
    """serve's and attach's path: each dataset's results leave `_evaluate_once` masked, judged
    and kept in the history raw (the scan replaced by its results: no Spark here)."""
    from lineage_quality.contracts import BoundRules, DatasetPattern
    from lineage_quality.evaluation.evaluator import Evaluator

    rules = (stat("max"), stat("avg", threshold=Threshold(Operator.GREATER_THAN, 0)))
    bound = BoundRules("people", "people", (DatasetPattern("file", "/lake/*"),), rules=rules,
                       samples=POLICY)  # fmt: skip

    class Scanned(Evaluator):
        def _evaluate_dataset(self, *args: Any, **kwargs: Any) -> list[RuleResult]:
            raw = [value_verdict(rules[0], 987653, 10), value_verdict(rules[1], 5.4e5, 10)]
            return [attrs.evolve(r, measures=MEASURES) for r in raw]

    store = open_history(tmp_path / "h.db")
    evaluator = Scanned([bound], history=store, sampling=SAMPLING)
    event = {**EVENT, "inputs": EVENT["outputs"], "outputs": []}  # an input: nothing listed
    ref = DatasetRef("inputs", 0, "file", "/lake/people")
    try:
        top, avg = evaluator._evaluate_once(Event.of(event), ref, [bound])
        (point,) = store.series(ref.key, rules[0].id)
    finally:
        store.close()
    digest = SAMPLING.shown("salary", 987653)
    assert (top.status, top.actual, top.observed) == (Status.FAILED, None, digest)
    assert (avg.status, avg.actual) == (Status.PASSED, 5.4e5)
    assert top.measures is avg.measures and top.measures is not None
    assert dict(top.measures.columns)["salary"].max is None
    assert (point.value, point.shown) == (987653, digest)
    # without samples (Evaluator(sampling=None)) the masking still holds, under a key of its own
    bare = Scanned([bound])
    (top_bare, _) = bare._evaluate_once(Event.of(event), ref, [bound])
    assert top_bare.actual is None and str(top_bare.observed).startswith(HASH_PREFIX)

"""Quality over time, without Spark: history verdicts, their declaration in both contract formats,
the SQLite store and its bounds, and the chart's content."""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import attrs
import pytest

from lineage_quality.contracts.odcs import parse_odcs
from lineage_quality.contracts.schema_json import parse_schema_json
from lineage_quality.errors import ContractError
from lineage_quality.history import HistoryBounds, Measured, Point, history_verdict, open_history
from lineage_quality.history.chart import svg
from lineage_quality.history.judge import judge_and_record
from lineage_quality.kinds import RuleKind
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.rules.history import parse_history

DAY = 86_400_000
T0 = 1_800_000_000_000
# the store keeps what is within its retention of the wall clock: stored series start here
RECENT = (int(time.time() * 1000) // DAY - 20) * DAY


def _rule(history: dict[str, Any], threshold: Threshold | None = None) -> Rule:
    return Rule(
        id="orders.rows",
        kind=RuleKind.ROW_COUNT,
        threshold=threshold or Threshold(Operator.GREATER_THAN, 0),
        history=parse_history(history),
    )


def _measured(rule: Rule, value: int) -> RuleResult:
    return RuleResult(rule=rule, status=Status.PASSED, actual=value, row_count=value)


def _points(values: list[float], status: str = "PASSED", step: int = DAY) -> list[Point]:
    return [Point(f"run-{i}", T0 + i * step, v, status) for i, v in enumerate(values)]


def test_relative_change_against_the_previous_passing_run() -> None:
    rule = _rule({"compare": "relativeChange"}, Threshold(Operator.BETWEEN, 0.7, 1.3))
    past = _points([1000, 1010])
    ok = history_verdict(_measured(rule, 1100), past, T0 + 2 * DAY)
    assert ok.status is Status.PASSED and ok.actual == pytest.approx(1100 / 1010)
    assert dict(ok.baseline or ())["previous"] == 1010 and ok.measured == 1100
    drop = history_verdict(_measured(rule, 600), past, T0 + 2 * DAY)
    assert drop.status is Status.FAILED and drop.actual == pytest.approx(600 / 1010)
    assert drop.expected == "ratio to the previous run between 0.7 and 1.3"
    # the run after an anomaly compares with the last accepted value, not the anomaly
    after = [*past, Point("run-2", T0 + 2 * DAY, 600, "FAILED")]
    assert history_verdict(_measured(rule, 1005), after, T0 + 3 * DAY).status is Status.PASSED


def test_absolute_change() -> None:
    rule = _rule({"compare": "absoluteChange"}, Threshold(Operator.BETWEEN, -50, 50))
    result = history_verdict(_measured(rule, 1070), _points([1000]), T0 + DAY)
    assert result.status is Status.FAILED and result.actual == 70


def test_stddev_band_of_the_last_runs() -> None:
    rule = _rule({"compare": "stddev", "runs": 5, "k": 2, "minHistory": 5})
    past = _points([100, 102, 98, 101, 99, 500])  # only the last 5 form the window
    result = history_verdict(_measured(rule, 101), past[:5], T0 + 5 * DAY)
    base = dict(result.baseline or ())
    assert base["n"] == 5 and base["mean"] == pytest.approx(100.0)
    assert base["stddev"] == pytest.approx(1.5811388, rel=1e-6)  # sample stddev
    assert result.status is Status.PASSED
    assert history_verdict(_measured(rule, 110), past[:5], T0 + 5 * DAY).status is Status.FAILED


def test_too_little_history_is_skipped_never_a_pass() -> None:
    rule = _rule({"compare": "stddev", "runs": 7, "minRuns": 5, "minHistory": 5})
    result = history_verdict(_measured(rule, 100), _points([100, 101]), T0 + 2 * DAY)
    assert result.status is Status.SKIPPED and not result.success
    assert result.skip_reason == "HISTORY_TOO_SHORT"
    assert result.message == "needs 5 runs, has 2"
    # isolated failed points are not part of a baseline (failures alternating with passes)
    mixed = _points([100, 100, 100, 100, 100, 100])
    mixed = [p if i % 2 else attrs.evolve(p, status="FAILED") for i, p in enumerate(mixed)]
    failed = history_verdict(_measured(rule, 100), mixed, T0 + 7 * DAY)
    assert failed.status is Status.SKIPPED and failed.message == "needs 5 runs, has 3"


def test_seasonal_uses_the_same_weekday_and_hour() -> None:
    rule = _rule({"compare": "seasonal", "runs": 3, "k": 3})
    now = T0 + 21 * DAY
    # Mondays at 08:00 carry ~1000 rows, other days ~10: only the same season is the baseline
    past = [Point(f"w{w}", now - w * 7 * DAY, 1000 + w, "PASSED") for w in (1, 2, 3)]
    past += [Point(f"d{d}", now - d * DAY, 10, "PASSED") for d in range(1, 21) if d % 7]
    assert history_verdict(_measured(rule, 1001), past, now).status is Status.PASSED
    assert history_verdict(_measured(rule, 10), past, now).status is Status.FAILED


def test_freshness_across_runs() -> None:
    rule = _rule({"compare": "freshness"}, Threshold(Operator.LESS_THAN, 2 * 86_400))
    past = _points([5, 7, 7, 7])  # unchanged since run-1
    stale = history_verdict(_measured(rule, 7), past, T0 + 4 * DAY)
    assert stale.status is Status.FAILED and stale.actual == 3 * 86_400
    assert history_verdict(_measured(rule, 8), past, T0 + 4 * DAY).actual == 0


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"compare": "mean"}, "history compare must be one of"),
        ({"compare": "stddev", "runs": 1}, "at least 2"),
        ({"compare": "stddev", "runs": 3, "minRuns": 4}, "more than runs"),
        ({"compare": "relativeChange", "k": 2}, "k applies to stddev"),
        ({"compare": "stddev", "window": 3}, "unknown history key(s) window"),
        (["stddev"], "must be an object"),
    ],
)
def test_bad_history_declarations_are_refused(value: Any, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_history(value)


ODCS = """apiVersion: v3.0.2
kind: DataContract
id: hist
version: 1.0.0
status: active
schema:
  - name: orders
    quality:
      - metric: rowCount
        name: orders_volume
        mustBeBetween: [0.7, 1.3]
        customProperties:
          - property: lineageQuality.history
            value: {compare: relativeChange}
    properties:
      - name: email
        quality:
          - metric: nullValues
            name: email_nulls_usual
            customProperties:
              - property: lineageQuality.history
                value: {compare: stddev, runs: 7, k: 3, minRuns: 5}
"""


def test_odcs_declares_history_rules() -> None:
    (bound,) = parse_odcs(ODCS, "hist.yaml")
    volume, nulls = (r for r in bound.rules if r.history is not None)
    assert volume.history is not None and volume.history.compare.value == "relativeChange"
    assert nulls.history is not None and (nulls.history.runs, nulls.history.k) == (7, 3.0)
    assert nulls.params()["history"] == {"compare": "stddev", "runs": 7, "minRuns": 5, "k": 3.0}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("        mustBeBetween: [0.7, 1.3]\n", "needs an operator for the compared quantity"),
        ("value: {compare: relativeChange}", "history compare must be one of"),
    ],
)
def test_odcs_history_errors_name_the_entry(edit: str, message: str) -> None:
    text = ODCS.replace(edit, "" if "must" in edit else "value: {compare: bogus}")
    with pytest.raises(ContractError, match=re.escape(message)) as caught:
        parse_odcs(text, "hist.yaml")
    assert "schema[0].quality[0]" in str(caught.value)


def test_json_rules_declare_history_rules() -> None:
    bound = parse_schema_json(
        '{"rules": [{"field": "amount", "type": "float"}], "history": ['
        '{"metric": "rowCount", "compare": "relativeChange", "min": 0.7, "max": 1.3},'
        '{"metric": "avg", "field": "amount", "compare": "stddev", "runs": 5}]}',
        "orders.json",
    )
    volume, avg = (r for r in bound.rules if r.history is not None)
    assert volume.threshold == Threshold(Operator.BETWEEN, 0.7, 1.3)
    assert avg.kind is RuleKind.STATISTIC and avg.statistic == "avg" and avg.columns == ("amount",)
    with pytest.raises(ContractError, match="needs `min` and/or `max`"):
        parse_schema_json(
            '{"rules": [{"field": "a"}], "history": [{"metric": "rowCount", '
            '"compare": "absoluteChange"}]}',
            "x.json",
        )


def test_the_store_keeps_an_evaluation_in_one_transaction_and_stays_bounded(
    tmp_path: Path,
) -> None:
    store = open_history(tmp_path / "h.db", HistoryBounds(max_points=200, retention_days=30))
    for run in range(300):
        at = RECENT + run * 1000
        store.append(
            [
                Measured("file:/o", "rows", f"r{run}", "rowCount", run, "PASSED", at),
                Measured("file:/o", "nulls", f"r{run}", "nullValues", 0, "PASSED", at),
            ]
        )
    with sqlite3.connect(tmp_path / "h.db") as db:
        (count,) = db.execute("SELECT COUNT(*) FROM lq_history").fetchone()
    assert count <= 200
    series = store.series("file:/o", "rows")
    assert series[-1].value == 299 and series == sorted(series, key=lambda p: p.event_ms)
    # the same run again replaces its point (a repeated COMPLETE after a restart)
    store.append([Measured("file:/o", "rows", "r299", "rowCount", 2, "FAILED", RECENT + 299_000)])
    last = store.series("file:/o", "rows")[-1]
    assert (last.run_id, last.value, last.status) == ("r299", 2.0, "FAILED")


class _BrokenStore:
    def series(self, *args: Any, **kwargs: Any) -> list[Point]:
        raise OSError("disk gone")

    def append(self, rows: Any) -> None:
        raise AssertionError("not reached")


def test_an_unreadable_store_makes_history_rules_errors_only() -> None:
    rule = _rule({"compare": "relativeChange"}, Threshold(Operator.BETWEEN, 0.7, 1.3))
    plain = Rule(id="plain", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0))
    results = [_measured(rule, 10), _measured(plain, 10)]
    judged = judge_and_record(_BrokenStore(), "file:/o", "r", T0, results)  # type: ignore[arg-type]
    assert judged[0].status is Status.ERROR and "history store cannot be read" in (
        judged[0].message or ""
    )
    assert judged[1] is results[1]


def test_the_chart_shows_points_band_and_failed_marks() -> None:
    points = [
        Point(f"r{i}", T0 + i * DAY, v, "FAILED" if v < 800 else "PASSED", 900.0, 1100.0)
        for i, v in enumerate([1000, 1010, 990, 600, 1005])
    ]
    chart = svg("orders.rows on file:/o", points)
    circles = re.findall(
        r'<circle class="point"[^>]*data-status="(\w+)" data-value="([^"]+)"', chart
    )
    assert [(s, float(v)) for s, v in circles] == [
        ("PASSED", 1000.0), ("PASSED", 1010.0), ("PASSED", 990.0), ("FAILED", 600.0),
        ("PASSED", 1005.0),
    ]  # fmt: skip
    marks = re.findall(r'class="failed-mark"[^>]*data-time="([^"]+)"', chart)
    assert marks == ["2027-01-18T08:00:00Z"]  # the day-3 run, and only it
    assert 'data-band-points="5"' in chart
    assert 'data-points="5" data-failed="1"' in chart


def test_a_history_rule_builds_its_own_series_from_its_first_run(tmp_path: Path) -> None:
    """Its first runs are SKIPPED (too little history) but still measured and kept: they are the
    baseline of the runs after them."""
    store = open_history(tmp_path / "h.db")
    rule = _rule({"compare": "stddev", "runs": 3, "k": 3, "minHistory": 3})
    statuses = []
    for day, rows in enumerate([100, 102, 98, 101, 60, 99]):
        (judged,) = judge_and_record(
            store, "file:/o", f"run-{day}", RECENT + day * DAY, [_measured(rule, rows)]
        )
        statuses.append(judged.status.value)
    assert statuses == ["SKIPPED"] * 3 + ["PASSED", "FAILED", "PASSED"]
    kept = store.series("file:/o", "orders.rows")
    assert [(p.value, p.status) for p in kept] == [
        (100.0, "SKIPPED"), (102.0, "SKIPPED"), (98.0, "SKIPPED"), (101.0, "PASSED"),
        (60.0, "FAILED"), (99.0, "PASSED"),
    ]  # fmt: skip

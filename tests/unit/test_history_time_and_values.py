"""The history store against what events can bring (issue 44, cases 1 and 4): an event time far in
the future cannot expire anyone's history (retention is measured from the wall clock), a time the
viewer cannot show is shown as such, and a measured NaN or infinity is never kept as a number nor
read into a baseline."""

from __future__ import annotations

import math
import sqlite3
import time
from pathlib import Path

import pytest

from lineage_quality.cli import main
from lineage_quality.history import HistoryBounds, Measured, Point, history_verdict, open_history
from lineage_quality.history.judge import judge_and_record
from lineage_quality.kinds import RuleKind
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.rules.history import parse_history

DAY = 86_400_000
NOW = int(time.time() * 1000)
RECENT = (NOW // DAY - 10) * DAY
YEAR_9999 = 253_402_214_400_000  # 9999-12-31T00:00:00Z
YEAR_10000 = 253_402_300_800_000  # 10000-01-01T00:00:00Z: past what datetime can show


def _row(dataset: str, run: str, value: float, at: int, status: str = "PASSED") -> Measured:
    return Measured(dataset, "orders.rows", run, "rowCount", value, status, at)


def test_an_event_time_in_year_9999_expires_no_one_elses_history(tmp_path: Path) -> None:
    store = open_history(tmp_path / "h.db", HistoryBounds(retention_days=30))
    for day in range(5):
        store.append([_row("file:/a", f"a{day}", 100 + day, RECENT + day * DAY)])
        store.append([_row("file:/b", f"b{day}", 200 + day, RECENT + day * DAY)])
    kept = store.append([_row("file:/evil", "x", 1, YEAR_9999)])
    assert [len(store.series(d, "orders.rows")) for d in ("file:/a", "file:/b")] == [5, 5]
    assert kept == 0 and store.series("file:/evil", "orders.rows") == []  # not kept either


def test_retention_is_measured_from_the_wall_clock(tmp_path: Path) -> None:
    store = open_history(tmp_path / "h.db", HistoryBounds(retention_days=30))
    store.append([_row("file:/a", "old", 1, NOW - 40 * DAY)])  # alone: it is the newest
    store.append([_row("file:/a", "recent", 2, NOW - 20 * DAY)])
    assert [p.run_id for p in store.series("file:/a", "orders.rows")] == ["recent"]


def test_the_judge_says_when_an_evaluation_is_not_kept(tmp_path: Path) -> None:
    store = open_history(tmp_path / "h.db")
    plain = Rule(id="plain", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0))
    result = RuleResult(rule=plain, status=Status.PASSED, actual=5, row_count=5)
    (judged,) = judge_and_record(store, "file:/a", "r", YEAR_9999, [result])
    assert judged.status is Status.PASSED and "not kept in the history" in (judged.scope or "")


def _store_with_a_year_10000_point(path: Path) -> None:
    """A store as an older version may have left it: a point at a time past year 9999."""
    open_history(path).close()
    with sqlite3.connect(path) as db:
        for run, at, value in (("r1", RECENT, 5.0), ("r2", YEAR_10000, 6.0)):
            db.execute(
                "INSERT INTO lq_history (dataset, rule_id, run_id, metric, value, status, "
                "event_ms, recorded_ms) VALUES ('file:/a', 'orders.rows', ?, 'rowCount', ?, "
                "'PASSED', ?, 0)",
                (run, value, at),
            )


def test_the_viewer_shows_a_time_past_year_9999_instead_of_crashing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "h.db"
    _store_with_a_year_10000_point(db)
    for chart in ("c.svg", "c.html"):
        code = main(
            [
                "history", "--history", str(db), "--dataset", "file:/a", "--rule", "orders.rows",
                "--plot", str(tmp_path / chart),
            ]
        )  # fmt: skip
        assert code == 0
        assert f"{YEAR_10000} ms" in (tmp_path / chart).read_text(encoding="utf-8")
    out = capsys.readouterr().out
    assert f"out-of-range time ({YEAR_10000} ms after 1970)\tr2\t6\tPASSED" in out


def test_non_finite_values_are_kept_as_no_number(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    store = open_history(db)
    values = [5.0, math.nan, math.inf, -math.inf]
    for i, value in enumerate(values):
        store.append([_row("file:/a", f"r{i}", value, RECENT + i * DAY)])
    with sqlite3.connect(db) as raw:
        kept = raw.execute(
            "SELECT run_id, value, nonfinite FROM lq_history ORDER BY event_ms"
        ).fetchall()
    assert kept == [
        ("r0", 5.0, None), ("r1", None, "NaN"), ("r2", None, "Infinity"), ("r3", None, "-Infinity")
    ]  # fmt: skip
    shown = store.series("file:/a", "orders.rows")  # for the viewer and the chart
    assert [repr(p.value) for p in shown] == ["5.0", "nan", "inf", "-inf"]
    baseline = store.series("file:/a", "orders.rows", finite_only=True)
    assert [p.value for p in baseline] == [5.0]


def _history_rule() -> Rule:
    return Rule(
        id="orders.rows",
        kind=RuleKind.ROW_COUNT,
        threshold=Threshold(Operator.GREATER_THAN, 0),
        history=parse_history({"compare": "stddev", "runs": 3, "k": 3, "minHistory": 3}),
    )


def test_a_non_finite_measurement_is_never_part_of_a_later_baseline(tmp_path: Path) -> None:
    """NaN and Infinity FAIL whatever the history (docs/rules.md: a NaN statistic meets no
    threshold; a skip would never block) and are kept as no number; the finite runs measured
    early are SKIPPED (too little history); the run after the three finite ones is judged on those
    three alone."""
    store = open_history(tmp_path / "h.db")
    rule = _history_rule()
    verdicts = []
    for day, value in enumerate([100.0, math.nan, math.inf, 102.0, 98.0, 101.0]):
        result = RuleResult(rule=rule, status=Status.PASSED, actual=value, row_count=1)
        (judged,) = judge_and_record(store, "file:/o", f"run-{day}", RECENT + day * DAY, [result])
        verdicts.append(judged)
    assert [v.status for v in verdicts[:5]] == [
        Status.SKIPPED, Status.FAILED, Status.FAILED, Status.SKIPPED, Status.SKIPPED
    ]  # fmt: skip
    assert verdicts[1].message == "the value is NaN: it meets no threshold"
    assert all("not kept" not in (v.scope or "") for v in verdicts)
    last = verdicts[-1]
    assert last.status is Status.PASSED
    assert dict(last.baseline or ())["n"] == 3
    assert dict(last.baseline or ())["mean"] == pytest.approx(100.0)
    assert len(store.series("file:/o", "orders.rows")) == 6  # the NaN and Infinity runs kept


def test_a_non_finite_point_read_from_anywhere_is_in_no_baseline() -> None:
    rule = _history_rule()
    past = [
        Point(f"r{i}", RECENT + i * DAY, v, "PASSED") for i, v in enumerate([100, 102, math.inf])
    ]
    past.append(Point("r3", RECENT + 3 * DAY, 98, "PASSED"))
    result = RuleResult(rule=rule, status=Status.PASSED, actual=101, row_count=101)
    judged = history_verdict(result, past, RECENT + 4 * DAY)
    assert judged.status is Status.PASSED
    assert dict(judged.baseline or ())["mean"] == pytest.approx(100.0)

"""A month and a half of daily runs with a weekly rhythm and three planted anomalies, judged day by
day against a SQLite store (issue 42; tests/history_month.py has the series and the acceptance;
tests/spark/test_history_month_engine.py measures the same rows with the engine): every anomaly
FAILs, at most 2 false alarms per rule, a lasting new level fails at most its documented bound, and
`history accept` on the new level's first run makes the next run pass."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import attrs
import pytest

from history_month import (
    DATASET,
    DAY,
    DAYS,
    NULLS,
    SHIFT,
    SPIKE,
    START,
    check_month,
    failed_days,
    history_rules,
    measured,
    replay,
    run_id,
)
from lineage_quality.cli import main
from lineage_quality.history import open_history
from lineage_quality.history.judge import judge_and_record
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules.history import HistoryMinimums

RULES = history_rules()


def _results(day: int) -> list[RuleResult]:
    values = measured(day)
    return [RuleResult(rule=r, status=Status.PASSED, actual=values[str(r.name)]) for r in RULES]


def test_a_month_with_a_weekly_rhythm_and_three_anomalies(tmp_path: Path) -> None:
    store = open_history(tmp_path / "h.db")
    verdicts = replay(store, _results)
    found = check_month(verdicts)
    # the spike fails once and is in no later baseline; Deequ's semantics would fail its return
    assert SPIKE + 1 not in found["rows_ratio"] and SPIKE + 1 not in found["rows_change"]
    # the new level of the mean fails recoverAfter (3) runs, then those runs are its baseline
    day = verdicts["mean_amount_usual"][SHIFT + 3]
    assert day.status is Status.PASSED, day
    account = dict(day.baseline or ())
    assert account["failedButJoined"] == [
        {"run": run_id(d), "why": "3 failed runs in a row: a lasting change"}
        for d in range(SHIFT, SHIFT + 3)
    ]
    # a change rule takes the new level from the next run, which confirms it
    ratio = dict(verdicts["rows_ratio"][SHIFT + 1].baseline or ())
    assert ratio["previousRun"] == run_id(SHIFT) and ratio["runIds"] == [run_id(SHIFT)]
    assert ratio["previousWhy"] == "the latest run, FAILED: this run confirms its level"
    # the spike is left out of the bands after it, and says why
    after = dict(verdicts["rows_usual"][SPIKE + 1].baseline or ())
    assert after["leftOut"][0]["run"] == run_id(SPIKE)
    assert after["leftOut"][0]["why"].startswith("FAILED: 1 failed run(s) in a row so far")
    later = dict(verdicts["rows_usual"][SPIKE + 3].baseline or ())
    assert later["leftOut"][0]["why"].startswith("FAILED: an isolated anomaly")
    store.close()


def test_the_first_days_raise_no_false_alarm(tmp_path: Path) -> None:
    """Issue 49: a stddev rule on the null count declared with minRuns 2 (nulls_usual) is SKIPPED
    until its baseline holds its minimum history (7 runs), whatever minRuns says: with bands from
    2-3 runs its first days fail normal values; then it catches both anomalies and nothing else.
    """
    verdicts = replay(open_history(tmp_path / "h.db"), _results)
    nulls = verdicts["nulls_usual"]
    assert failed_days(nulls) == {SPIKE, NULLS}
    assert [r.status for r in nulls[:7]] == [Status.SKIPPED] * 7
    assert nulls[4].message == (
        "needs 7 runs before it can fail, has 4 kept (the minimum history of a stddev rule: "
        "its minHistory, or --history-min-stddev)"
    )
    assert dict(nulls[7].baseline or ())["n"] == 7
    # the same month with the minimum lowered to what minRuns allows: the false alarms of the
    # report, on the first days
    lowered = replay(
        open_history(tmp_path / "low.db"), _results, minimums=HistoryMinimums(stddev=2)
    )
    early = failed_days(lowered["nulls_usual"]) - {SPIKE, NULLS}
    assert early == {2, 4, 5, 6}, early
    # as in the report: bands from 2-3 runs (the failed runs are left out of the next ones)
    assert {dict(lowered["nulls_usual"][d].baseline or ())["n"] for d in early} == {2, 3}
    # a rule's own minHistory lowers its minimum too (settable per rule)
    rule = next(r for r in RULES if r.name == "nulls_usual")
    own = attrs.evolve(rule, history=attrs.evolve(rule.history, min_history=2))
    values = [measured(day)["nulls_usual"] for day in range(7)]
    store = open_history(tmp_path / "own.db")
    statuses = [
        judge_and_record(
            store, DATASET, run_id(day), START + day * DAY,
            [RuleResult(rule=own, status=Status.PASSED, actual=values[day])],
        )[0].status
        for day in range(7)
    ]  # fmt: skip
    assert [d for d, s in enumerate(statuses) if s is Status.FAILED] == [2, 4, 5, 6]


def _accept(db: Path, rule: str, day: int, *more: str) -> int:
    return main(
        ["history", "accept", "--history", str(db), "--dataset", DATASET, "--rule", rule,
         "--run", run_id(day), "--why", "the new region went live", "--by", "ana", *more]
    )  # fmt: skip


def test_accepting_the_new_level_makes_the_next_run_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "h.db"
    store = open_history(db)
    rule_ids = {str(r.name): r.id for r in RULES}

    def accept_the_shift(day: int, today: Mapping[str, RuleResult]) -> None:
        if day == SHIFT:
            for name in ("rows_usual", "mean_amount_usual"):
                assert today[name].status is Status.FAILED
                assert _accept(db, rule_ids[name], SHIFT) == 0

    verdicts = replay(store, _results, accept_the_shift)
    for name in ("rows_usual", "mean_amount_usual"):
        assert failed_days(verdicts[name]) & set(range(SHIFT, DAYS)) == {SHIFT}, name
        nxt = dict(verdicts[name][SHIFT + 1].baseline or ())
        assert {"run": run_id(SHIFT), "why": "accepted as normal by ana"} in nxt["failedButJoined"]
    out = capsys.readouterr().out
    assert "ana: accepted run run-36 as normal: the new region went live" in out
    store.close()

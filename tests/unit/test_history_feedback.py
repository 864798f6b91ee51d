"""`history accept` (and its undo) and `history rebaseline` on a SQLite store (issue 42): each is
recorded with who, when and why, refused when it makes no sense, read by the next evaluation's
baseline, shown by `history --rule` and drawn on its chart; the records are bounded.
tests/deploy/test_history_feedback_postgres.py runs the same commands on PostgreSQL."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from lineage_quality.cli import main
from lineage_quality.history import Action, Feedback, Measured, open_history
from lineage_quality.history import feedback_records as store_module
from lineage_quality.history.judge import judge_and_record
from lineage_quality.kinds import RuleKind
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.rules.history import parse_history

DAY = 86_400_000
RECENT = (int(time.time() * 1000) // DAY - 20) * DAY
DS, RULE = "file:/lake/orders", "orders.rows"
RULE_OBJ = Rule(
    id=RULE,
    kind=RuleKind.ROW_COUNT,
    threshold=Threshold(Operator.GREATER_THAN, 0),
    history=parse_history({"compare": "stddev", "runs": 5, "minRuns": 5, "minHistory": 5}),
)


def _day(db: Path, day: int, rows: int) -> RuleResult:
    store = open_history(db)
    try:
        measured = RuleResult(rule=RULE_OBJ, status=Status.PASSED, actual=rows, row_count=rows)
        (judged,) = judge_and_record(store, DS, f"run-{day}", RECENT + day * DAY, [measured])
    finally:
        store.close()
    return judged


def _cli(db: Path, command: str, *more: str) -> int:
    return main(["history", command, "--history", str(db), "--dataset", DS, "--rule", RULE, *more])


def test_accept_undo_and_rebaseline_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "history.db"
    for day, rows in enumerate([100, 102, 98, 101, 99]):
        _day(db, day, rows)
    assert _day(db, 5, 160).status is Status.FAILED
    capsys.readouterr()

    # refused: an unknown run, a run that passed, an undo of nothing, no reason given
    assert _cli(db, "accept", "--run", "nope", "--why", "x") == 2
    assert "no run 'nope' of rule 'orders.rows'" in capsys.readouterr().err
    assert _cli(db, "accept", "--run", "run-1", "--why", "x") == 2
    assert "run 'run-1' SKIPPED: only a failed run is accepted" in capsys.readouterr().err
    assert _cli(db, "accept", "--run", "run-5", "--undo", "--why", "x") == 2
    assert "is not accepted: nothing to undo" in capsys.readouterr().err
    assert _cli(db, "accept", "--run", "run-5", "--why", "  ") == 2
    capsys.readouterr()

    assert _cli(db, "accept", "--run", "run-5", "--why", "new region", "--by", "ana") == 0
    out = capsys.readouterr().out
    assert re.search(r"Z ana: accepted run run-5 as normal: new region\n", out), out
    assert _cli(db, "accept", "--run", "run-5", "--why", "again", "--by", "ana") == 2
    assert "already accepted" in capsys.readouterr().err
    judged = _day(db, 6, 158)  # the next run passes: the accepted one is in its band
    assert judged.status is Status.PASSED
    assert {"run": "run-5", "why": "accepted as normal by ana"} in dict(judged.baseline or ())[
        "failedButJoined"
    ]

    assert _cli(db, "accept", "--run", "run-5", "--undo", "--why", "too early", "--by", "bo") == 0
    capsys.readouterr()
    assert _cli(db, "rebaseline", "--since", "nonsense", "--why", "x") == 2
    capsys.readouterr()
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime((RECENT + 5 * DAY) / 1000))
    assert _cli(db, "rebaseline", "--since", since, "--why", "migrated", "--by", "cy") == 0
    assert "5 earlier run(s) of 7 are in no later baseline" in capsys.readouterr().out
    skipped = _day(db, 7, 159)  # since the rebaseline: run 6 (run 5 failed, no longer accepted)
    assert skipped.status is Status.SKIPPED and skipped.message == "needs 5 runs, has 1"

    # the viewer shows each record and a note per run; the chart draws them
    chart = tmp_path / "rows.html"
    assert main(["history", "--history", str(db), "--dataset", DS, "--rule", RULE,
                 "--plot", str(chart)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "time\trun\tvalue\tstatus\tband\tnote" in out
    assert re.search(r"\trun-1\t102\tSKIPPED\t\tbefore the rebaseline\n", out), out
    assert "ana: accepted run run-5 as normal: new region" in out
    assert "bo: took back the accept of run run-5: too early" in out
    assert "cy: started the baseline over from " in out
    page = chart.read_text()
    assert 'class="rebaseline"' in page and 'data-by="cy"' in page
    assert 'data-accepted="0"' in page  # the accept was taken back
    assert page.count("<li>") == 3


def test_the_chart_marks_an_accepted_run(tmp_path: Path) -> None:
    db = tmp_path / "history.db"
    for day, rows in enumerate([100, 102, 98, 101, 99, 160]):
        _day(db, day, rows)
    # the store may be named before the sub-command too
    assert main(["history", "--history", str(db), "accept", "--dataset", DS, "--rule", RULE,
                 "--run", "run-5", "--why", "<b>new</b>", "--by", "ana"]) == 0  # fmt: skip
    chart = tmp_path / "rows.svg"
    assert main(["history", "--history", str(db), "--dataset", DS, "--rule", RULE,
                 "--plot", str(chart)]) == 0  # fmt: skip
    svg = chart.read_text()
    assert 'data-accepted="1"' in svg
    assert re.search(r'<circle class="accepted" [^>]*data-run="run-5" data-by="ana"', svg)
    assert "&lt;b&gt;new&lt;/b&gt;" in svg and "<b>" not in svg  # texts stay texts


def test_feedback_needs_an_existing_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "none.db"
    assert _cli(missing, "accept", "--run", "r", "--why", "x") == 2
    assert "no history at" in capsys.readouterr().err
    assert not missing.exists()


def test_feedback_records_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "MAX_FEEDBACK", 10)
    store = open_history(tmp_path / "h.db")
    store.append([Measured(DS, RULE, "r0", "rowCount", 1, "FAILED", RECENT)])
    now = int(time.time() * 1000)
    old = Feedback(DS, RULE, Action.ACCEPT, "ana", "old", now - 500 * DAY, run_id="r0")
    store.record(old)
    assert store.feedback(DS, RULE) == []  # older than the retention: expired at once
    for i in range(25):
        store.record(Feedback(DS, RULE, Action.ACCEPT, "ana", "x" * 5000, now + i, run_id=f"r{i}"))
    kept = store.feedback(DS, RULE)
    assert 1 <= len(kept) <= 10 and kept[-1].run_id == "r24"
    assert len(kept[-1].why) == store_module.MAX_WHY
    store.close()


def test_an_older_store_without_feedback_reads_as_none(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    store = open_history(db)
    store.append([Measured(DS, RULE, "r0", "rowCount", 1, "PASSED", RECENT)])
    store.close()
    import sqlite3

    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE lq_history_feedback")
    conn.close()
    viewer = open_history(db, read_only=True)
    assert viewer.feedback(DS, RULE) == []
    viewer.close()
    assert main(["history", "--history", str(db), "--dataset", DS, "--rule", RULE]) == 0


def test_check_refuses_a_bad_history_before_spark_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lineage_quality.evaluation import evaluator

    def no_spark(*_: object, **__: object) -> None:
        raise AssertionError("Spark was started")

    monkeypatch.setattr(evaluator, "evaluator_session", no_spark)
    contract = tmp_path / "rules.json"
    contract.write_text('{"rules": [{"field": "id"}]}')
    code = main(["check", "--contract", str(contract), "--dataset", str(tmp_path),
                 "--history", "postgresq://lq:secret-pw@db/x"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "neither a SQLite path nor a postgresql:// URL" in err, err
    assert "secret-pw" not in err

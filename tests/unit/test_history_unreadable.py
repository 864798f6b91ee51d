"""A crafted history file (issue 49, item 4): text where numbers belong, NULLs, a table or columns
missing, no database at all. Every reader of the store (the `history` viewer and its `accept`,
the verdicts of an evaluation, its baseline and feedback) turns it into one error line naming the
file, the row and the column: the viewer exits 2 (never a traceback); an evaluation makes its
history rules ERRORs saying the history is unreadable (never a pass) and the other rules stand."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from lineage_quality.cli import main
from lineage_quality.errors import ConfigError
from lineage_quality.history import Measured, open_history
from lineage_quality.history.judge import judge_and_record
from lineage_quality.kinds import RuleKind
from lineage_quality.results import Cause, RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.rules.history import parse_history

DAY = 86_400_000
NOW = int(time.time() * 1000)
DATASET, RULE = "file:/lake/orders", "orders.rows"
COLUMNS = "dataset, rule_id, run_id, metric, value, status, event_ms, recorded_ms"


def _store(db: Path, *rows: tuple[object, ...], columns: str = COLUMNS) -> Path:
    """A store written by this version with three good runs, then `rows` inserted raw."""
    store = open_history(db)
    store.append(
        [
            Measured(DATASET, RULE, f"run-{i}", "rowCount", 100 + i, "PASSED", NOW - (5 - i) * DAY)
            for i in range(3)
        ]
    )
    store.close()
    with sqlite3.connect(db) as raw:
        for row in rows:
            marks = ", ".join("?" * len(row))
            raw.execute(f"INSERT INTO lq_history ({columns}) VALUES ({marks})", row)
    raw.close()
    return db


def _bare(db: Path, table: str) -> Path:
    """An `lq_history` as a crafted file may declare it: no types, no NOT NULL."""
    with sqlite3.connect(db) as raw:
        raw.execute(table)
    raw.close()
    return db


def _view(db: Path, capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, str]:
    code = main(["history", "--history", str(db), "--dataset", DATASET, "--rule", RULE, *more])
    err = capsys.readouterr().err
    return code, err


def _row(
    run: object, value: object, event_ms: object, status: object = "PASSED"
) -> tuple[object, ...]:
    return (DATASET, RULE, run, "rowCount", value, status, event_ms, NOW)


@pytest.mark.parametrize(
    ("row", "column", "kind"),
    [
        (_row("bad", "many", NOW - DAY), "value", "'many' (text), not a number"),
        (_row("bad", 5, "yesterday"), "event_ms", "'yesterday' (text), not a whole number"),
        (_row("bad", 5, 12.5), "event_ms", "12.5 (a real), not a whole number"),
        (_row("bad", b"\x00\xff", NOW - DAY), "value", "(a blob), not a number"),
        (_row("bad", 5, NOW - DAY, b"PASSED"), "status", "(a blob), not a text"),
    ],
)
def test_the_viewer_names_the_file_row_and_column_of_a_bad_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], row: tuple[object, ...], column: str,
    kind: str,
) -> None:  # fmt: skip
    db = _store(tmp_path / "h.db", row)
    code, err = _view(db, capsys)
    assert code == 2, err
    assert err.startswith(f"lineage-quality: error: {db}: the history is unreadable: lq_history")
    assert "run_id 'bad'" in err and f"{column} holds" in err and kind in err, err
    assert "Traceback" not in err and len(err.splitlines()) == 1


def test_nulls_where_a_value_must_be(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _bare(
        tmp_path / "h.db",
        "CREATE TABLE lq_history (dataset, rule_id, run_id, metric, value, nonfinite, status, "
        "event_ms, version, lower_bound, upper_bound, recorded_ms, row_bytes)",
    )
    with sqlite3.connect(db) as raw:
        raw.execute(f"INSERT INTO lq_history ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (DATASET, RULE, None, "rowCount", 1.0, "PASSED", NOW, NOW))  # fmt: skip
    raw.close()
    code, err = _view(db, capsys)
    assert code == 2 and "run_id holds (NULL), not a text" in err and str(db) in err, err
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE lq_history SET run_id = 'r', event_ms = NULL")
    raw.close()
    code, err = _view(db, capsys)
    assert code == 2 and "run_id 'r'" in err and "event_ms holds (NULL)" in err, err
    # a NULL dataset in the list of datasets
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE lq_history SET dataset = NULL")
    raw.close()
    assert main(["history", "--history", str(db)]) == 2
    assert "dataset holds (NULL), not a text" in capsys.readouterr().err


def test_a_missing_table_or_column_or_no_database_at_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    no_table = _bare(tmp_path / "a.db", "CREATE TABLE accounts (id INTEGER)")
    code, err = _view(no_table, capsys)
    assert code == 2 and f"{no_table}: not a history store" in err, err
    # every column the viewer reads is there, or the store is refused up front (was: a
    # traceback at the first read of lower_bound)
    short = _bare(
        tmp_path / "b.db",
        "CREATE TABLE lq_history (dataset TEXT, rule_id TEXT, run_id TEXT, metric TEXT, "
        "value REAL, status TEXT, event_ms INTEGER)",
    )
    code, err = _view(short, capsys)
    assert code == 2 and "no column lower_bound, upper_bound" in err and str(short) in err, err
    # the writer (serve, check --history) refuses it as well, naming the file
    with pytest.raises(ConfigError, match=f"{short}.*(no such column|no column)"):
        open_history(short)
    junk = tmp_path / "c.db"
    junk.write_bytes(b"\xff" * 4096)
    code, err = _view(junk, capsys)
    assert code == 2 and str(junk) in err and "Traceback" not in err, err
    with pytest.raises(ConfigError, match=str(junk)):
        open_history(junk)


def test_a_bad_feedback_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _store(tmp_path / "h.db")
    with sqlite3.connect(db) as raw:
        raw.execute(
            "INSERT INTO lq_history_feedback (dataset, rule_id, action, run_id, since_ms, "
            "by_whom, why, at_ms) VALUES (?, ?, 'rebaseline', NULL, 'monday', 'ana', 'x', 1)",
            (DATASET, RULE),
        )
    raw.close()
    code, err = _view(db, capsys)
    assert code == 2 and "lq_history_feedback" in err and "since_ms holds 'monday'" in err, err
    code = main(["history", "accept", "--history", str(db), "--dataset", DATASET, "--rule", RULE,
                 "--run", "run-1", "--why", "normal"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "since_ms holds 'monday'" in err and str(db) in err, err


def _change_rule() -> Rule:
    return Rule(
        id=RULE, kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.BETWEEN, 0.5, 2),
        history=parse_history({"compare": "relativeChange"}),
    )  # fmt: skip


BARE = (
    "CREATE TABLE lq_history (dataset, rule_id, run_id, metric, value, nonfinite, status, "
    "event_ms, version, lower_bound, upper_bound, recorded_ms, row_bytes)"
)


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (_row("bad", "many", NOW - DAY), "run_id 'bad'): value holds 'many' (text)"),
        (_row(None, 5.0, NOW - DAY), "run_id holds (NULL), not a text"),
        (_row("bad", 5.0, NOW - DAY, None), "status holds (NULL), not a text"),
    ],
)
def test_an_evaluation_makes_its_history_rules_errors_saying_the_history_is_unreadable(
    tmp_path: Path, bad: tuple[object, ...], said: str
) -> None:
    db = _bare(tmp_path / "h.db", BARE)  # as a crafted file may declare it: no NOT NULL
    store = open_history(db)  # the writer's open (serve, check --history) accepts the shape
    store.close()
    with sqlite3.connect(db) as raw:
        raw.execute(f"INSERT INTO lq_history ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", bad)
    raw.close()
    store = open_history(db)
    plain = Rule(id="plain", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0))
    results = [
        RuleResult(rule=_change_rule(), status=Status.PASSED, actual=101.0),
        RuleResult(rule=plain, status=Status.PASSED, actual=101.0),
    ]
    judged = judge_and_record(store, DATASET, "run-now", NOW, results)
    store.close()
    assert judged[0].status is Status.ERROR and judged[0].cause is Cause.UNREADABLE, judged[0]
    message = judged[0].message or ""
    assert message.startswith(f"{db}: the history is unreadable: lq_history"), message
    assert said in message, message
    assert judged[1] is results[1]  # the other rules stand

"""The history store is bounded in bytes as well as rows, and the `history` viewer changes nothing
(issue 44, case 10): names past their bound are cut with a hash of the whole, a byte bound expires
the oldest rows, the viewer opens SQLite read-only, and a store written by an older version is
upgraded in place by the writer."""

from __future__ import annotations

import argparse
import math
import sqlite3
import time
from pathlib import Path

import pytest

from lineage_quality.cli import main
from lineage_quality.cli.history import add_history_flags, history_store
from lineage_quality.history import HistoryBounds, Measured, open_history

DAY = 86_400_000
RECENT = (int(time.time() * 1000) // DAY - 10) * DAY
MAX_NAME = 512  # names.MAX_NAME: a longer name is cut and ends in a hash
ROW_OVERHEAD = 64  # store.ROW_OVERHEAD: what a row counts beyond its texts


def _view(db: Path, *more: str) -> int:
    return main(["history", "--history", str(db), *more])


def test_the_viewer_refuses_a_sqlite_file_that_is_no_history_and_leaves_it_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "app.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO accounts (name) VALUES ('a')")
    db.close()
    before = other.read_bytes()
    assert _view(other) == 2
    err = capsys.readouterr().err
    assert "not a history store" in err and str(other) in err and len(err.splitlines()) == 1
    assert other.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]  # no -wal, no -shm
    with sqlite3.connect(other) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)


def test_the_viewer_refuses_a_file_that_is_not_sqlite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("not a database\n" * 100)
    before = other.read_bytes()
    assert _view(other, "--dataset", "file:/a") == 2
    assert "lineage-quality: error:" in capsys.readouterr().err
    assert other.read_bytes() == before


def test_the_viewer_reads_a_store_without_writing_to_it(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    store = open_history(db)
    store.append([Measured("file:/a", "r", "run", "rowCount", 1, "PASSED", RECENT)])
    store.close()
    before = db.read_bytes()
    assert _view(db) == 0
    assert _view(db, "--dataset", "file:/a", "--rule", "r") == 0
    assert db.read_bytes() == before


def test_long_names_are_cut_with_a_hash_of_the_whole(tmp_path: Path) -> None:
    """Two 3,000-character names that differ only past the cut stay two series."""
    store = open_history(tmp_path / "h.db")
    prefix = "file:/" + "d" * 2_990
    for end in ("A", "B"):
        store.append([Measured(prefix + end, "r", "run", "rowCount", 1, "PASSED", RECENT)])
    names = [name for name, _ in store.datasets()]
    assert len(names) == 2 and all(len(n) == MAX_NAME for n in names)
    assert [len(store.series(prefix + end, "r")) for end in ("A", "B")] == [1, 1]


def test_the_store_never_grows_past_its_byte_bound(tmp_path: Path) -> None:
    bound = 200_000
    db = tmp_path / "h.db"
    store = open_history(db, HistoryBounds(max_points=1_000_000, max_bytes=bound))
    rule = "rule-" + "r" * 400
    for run in range(400):
        name = f"file:/{run % 7}/" + "n" * 400
        at = RECENT + run * 1000
        store.append([Measured(name, rule, f"run-{run}", "rowCount", run, "PASSED", at)])
    with sqlite3.connect(db) as raw:
        (texts,) = raw.execute(
            "SELECT SUM(LENGTH(dataset) + LENGTH(rule_id) + LENGTH(run_id) + LENGTH(metric) "
            f"+ LENGTH(status) + {ROW_OVERHEAD}) FROM lq_history"
        ).fetchone()
    assert texts <= bound
    newest = store.series("file:/6/" + "n" * 400, rule)[-1]  # run 398 is the newest of /6/
    assert newest.run_id == "run-398"


def test_history_max_bytes_is_a_serve_setting(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--spool", default=str(tmp_path / "spool.db"))
    add_history_flags(parser)
    assert parser.parse_args([]).history_max_bytes == HistoryBounds().max_bytes
    store = history_store(parser.parse_args(["--history-max-bytes", "12345"]))
    assert store is not None and store.bounds.max_bytes == 12345
    store.close()


OLD_SCHEMA = """CREATE TABLE lq_history (
    dataset TEXT NOT NULL, rule_id TEXT NOT NULL, run_id TEXT NOT NULL, metric TEXT NOT NULL,
    value DOUBLE PRECISION NOT NULL, status TEXT NOT NULL, event_ms BIGINT NOT NULL,
    version TEXT, lower_bound DOUBLE PRECISION, upper_bound DOUBLE PRECISION,
    recorded_ms BIGINT NOT NULL, PRIMARY KEY (dataset, rule_id, run_id))"""


def test_a_store_of_an_older_version_is_read_then_upgraded(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    with sqlite3.connect(db) as raw:
        raw.execute(OLD_SCHEMA)
        raw.execute("CREATE INDEX lq_history_age ON lq_history (event_ms)")
        for i, value in enumerate([5.0, math.inf, 7.0]):
            raw.execute(
                "INSERT INTO lq_history VALUES ('file:/a', 'r', ?, 'rowCount', ?, 'PASSED', ?, "
                "NULL, NULL, NULL, 0)",
                (f"run{i}", value, RECENT + i * DAY),
            )
    raw.close()
    reader = open_history(db, read_only=True)  # the viewer: reads it as it is
    assert [p.value for p in reader.series("file:/a", "r")] == [5.0, math.inf, 7.0]
    reader.close()
    store = open_history(db)  # a writer upgrades it
    with sqlite3.connect(db) as raw:
        rows = raw.execute("SELECT value, nonfinite, row_bytes > 0 FROM lq_history").fetchall()
    assert sorted(rows, key=str) == sorted(
        [(5.0, None, 1), (None, "Infinity", 1), (7.0, None, 1)], key=str
    )
    assert [p.value for p in store.series("file:/a", "r", finite_only=True)] == [5.0, 7.0]
    store.append(
        [Measured("file:/a", "r", "run3", "rowCount", math.nan, "FAILED", RECENT + 3 * DAY)]
    )
    assert len(store.series("file:/a", "r")) == 4


# The form before masked values were kept (no `shown`).
BEFORE_SHOWN = """CREATE TABLE lq_history (
    dataset TEXT NOT NULL, rule_id TEXT NOT NULL, run_id TEXT NOT NULL, metric TEXT NOT NULL,
    value DOUBLE PRECISION, nonfinite TEXT, status TEXT NOT NULL, event_ms BIGINT NOT NULL,
    version TEXT, lower_bound DOUBLE PRECISION, upper_bound DOUBLE PRECISION,
    recorded_ms BIGINT NOT NULL, row_bytes BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (dataset, rule_id, run_id))"""


def test_a_store_written_before_masked_values_gains_their_column(tmp_path: Path) -> None:
    """Read as it is, then a writer adds `shown` and keeps a masked value's text beside its raw
    value (docs/rules.md, "Failing-row samples")."""
    db = tmp_path / "h.db"
    with sqlite3.connect(db) as raw:
        raw.execute(BEFORE_SHOWN)
        raw.execute(
            "INSERT INTO lq_history (dataset, rule_id, run_id, metric, value, status, event_ms, "
            "recorded_ms, row_bytes) VALUES ('file:/a', 'r', 'run0', 'statistic', 5.0, 'PASSED', "
            "?, 0, 80)",
            (RECENT,),
        )
    raw.close()
    reader = open_history(db, read_only=True)
    assert [(p.value, p.shown) for p in reader.series("file:/a", "r")] == [(5.0, None)]
    reader.close()
    store = open_history(db)
    store.append(
        [Measured("file:/a", "r", "run1", "statistic", 6.0, "PASSED", RECENT + DAY, shown="***")]
    )
    points = store.series("file:/a", "r")
    (_, _, run1) = store.of_run("file:/a", "run1")[0]
    store.close()
    assert [(p.value, p.shown) for p in points] == [(5.0, None), (6.0, "***")]
    assert (run1.value, run1.shown) == (6.0, "***")

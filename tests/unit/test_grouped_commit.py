"""Records of several threads committed together (history/database.py `Grouped`, the lineage
store's writes): fewer commits than records, each `run` back only once its rows are committed,
and a record that fails fails alone."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.history.database import Grouped, Statements


class _Store(Statements):
    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE t (n INTEGER PRIMARY KEY)")
        self._db.commit()
        self._lock = threading.Lock()
        self.placeholder = "?"
        self.commits = 0
        real = self._db

        class Counting:  # the connection, its commits counted
            def __getattr__(self, name: str) -> Any:
                return getattr(real, name)

            def commit(inner) -> None:
                self.commits += 1
                real.commit()

        self._db = Counting()


def test_records_of_several_threads_share_commits_and_a_failure_fails_alone(
    tmp_path: Path,
) -> None:
    store = _Store(tmp_path / "h.db")
    grouped = Grouped(store)
    gate = threading.Event()
    errors: list[BaseException] = []

    def insert(n: int) -> None:
        gate.wait()
        try:
            grouped.run(lambda cur: cur.execute("INSERT INTO t (n) VALUES (?)", (n,)))
        except sqlite3.IntegrityError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=insert, args=(n % 150,)) for n in range(160)]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join(30)
    rows = sqlite3.connect(str(tmp_path / "h.db")).execute("SELECT count(*) FROM t").fetchone()
    assert rows[0] == 150  # every record committed once; the 10 repeated keys refused
    assert len(errors) == 10  # ... each alone: the others of its batch committed
    assert store.commits < 160  # records queued behind a commit shared the next one
    with pytest.raises(ZeroDivisionError):
        grouped.run(lambda cur: 1 / 0)
    assert grouped.run(lambda cur: cur.execute("SELECT count(*) FROM t").fetchone()[0]) == 150


class _RolledBack(Exception):
    """What psycopg raises for a deadlock: its SQLSTATE on the exception."""

    def __init__(self, sqlstate: str) -> None:
        super().__init__(f"SQLSTATE {sqlstate}")
        self.sqlstate = sqlstate


class _Postgres(Statements):
    """A store as on PostgreSQL (`%s`): each transaction's outcome recorded."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.placeholder = "%s"
        self.outcomes: list[str] = []
        outcomes = self.outcomes

        class Connection:
            def cursor(self) -> object:
                return type("Cursor", (), {"close": lambda _self: None})()

            def commit(self) -> None:
                outcomes.append("commit")

            def rollback(self) -> None:
                outcomes.append("rollback")

            def pipeline(self) -> Any:
                return contextlib.nullcontext()

        self._db = Connection()


def test_a_transaction_postgresql_rolled_back_for_a_deadlock_is_run_again() -> None:
    store = _Postgres()
    failures = iter([_RolledBack("40P01"), _RolledBack("40001")])

    def work(cur: Any) -> str:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return "kept"

    assert Grouped(store).run(work) == "kept"
    assert store.outcomes == ["rollback", "rollback", "commit"]


def test_other_failures_and_a_deadlock_past_the_attempts_are_raised() -> None:
    store = _Postgres()
    with pytest.raises(_RolledBack):  # a constraint broken: not run again
        Grouped(store).run(lambda cur: (_ for _ in ()).throw(_RolledBack("23505")))
    assert store.outcomes == ["rollback"]
    store.outcomes.clear()
    with pytest.raises(_RolledBack):
        Grouped(store).run(lambda cur: (_ for _ in ()).throw(_RolledBack("40P01")))
    assert store.outcomes == ["rollback"] * 5

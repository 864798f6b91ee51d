"""Records of several threads committed together (history/database.py `Grouped`, the lineage
store's writes): fewer commits than records, each `run` back only once its rows are committed,
and a record that fails fails alone."""

from __future__ import annotations

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

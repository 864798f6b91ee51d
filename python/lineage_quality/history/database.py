"""What the stores in the history database share (the measured values: store.py; the lineage
tables: lineage/store.py; the run verdicts shared by producers: producer/shared_runs.py): opening
it at a SQLite path or a `postgresql://` URL, each store with a connection of its own, and
running statements on that connection under a lock (`Statements`)."""

from __future__ import annotations

import contextlib
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import attrs

from lineage_quality.errors import ConfigError
from lineage_quality.history.postgres import connect as connect_postgres
from lineage_quality.history.postgres import postgres_url
from lineage_quality.masking import masked

T = TypeVar("T")


@attrs.frozen
class Opened:
    """A connection to the database, its parameter marker (`?` SQLite, `%s` PostgreSQL), and
    where it is, for messages (a URL's password masked)."""

    connection: Any
    placeholder: str
    shown: str


def connect(
    where: str | Path, *, read_only: bool, password_file: str | Path | None, what: str
) -> Opened:
    """A new connection to the database at `where`. `read_only`: a SQLite file is opened
    `mode=ro` (not even its journal mode is set; a missing file is an error, never created), a
    PostgreSQL session is read-only. `what` names the store in errors ("the history")."""
    text = str(where)
    if postgres_url(text):  # a mistyped URL is refused, not taken for a SQLite path
        # postgres.py: where the password comes from, and every failure a masked ConfigError
        connection = connect_postgres(text, password_file)
        connection.read_only = read_only
        return Opened(connection, "%s", masked(text))
    path = Path(text[len("sqlite://") :] if text.startswith("sqlite://") else text)
    try:
        if read_only:
            uri = f"file:{quote(str(path.resolve()))}?mode=ro"
            connection = sqlite3.connect(uri, uri=True, timeout=30, check_same_thread=False)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
            connection.execute("PRAGMA journal_mode=WAL")
    except (OSError, sqlite3.Error) as exc:
        raise ConfigError(f"cannot open {what} at {path}: {exc}") from exc
    return Opened(connection, "?", str(path))


def made(make: Callable[[], T], opened: Opened, what: str) -> T:
    """`make()` (a store over `opened`), its failure a ConfigError naming where, the connection
    closed then."""
    try:
        return make()
    except ConfigError as exc:
        opened.connection.close()
        raise ConfigError(f"{opened.shown}: {exc}") from exc
    except Exception as exc:  # the DB-API module's own errors: schema or upgrade failed
        opened.connection.close()
        raise ConfigError(f"cannot open {what} at {opened.shown}: {first_line(exc)}") from exc


def first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:300]


class Statements:
    """Statements on one DB-API connection (`_db`), one at a time (`_lock`), written with `?`
    and run with the connection's own marker (`placeholder`)."""

    _db: Any
    _lock: threading.Lock
    placeholder: str

    def _sql(self, text: str) -> str:
        return text if self.placeholder == "?" else text.replace("?", self.placeholder)

    @contextlib.contextmanager
    def _transaction(self, batched: bool = False) -> Iterator[Any]:
        """A cursor in one transaction, committed when the block ends (rolled back if it
        raises). `batched`: on PostgreSQL, the statements and the commit go in one pipeline
        (fewer round trips)."""
        with self._lock:
            pipeline = (
                self._db.pipeline()
                if batched and self.placeholder != "?"
                else contextlib.nullcontext()
            )
            with pipeline:
                cur = self._db.cursor()
                try:
                    yield cur
                    self._db.commit()
                except BaseException:
                    self._db.rollback()
                    raise
                finally:
                    cur.close()

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Any]:
        """A cursor for one SELECT. On PostgreSQL in autocommit: one round trip instead of
        three (BEGIN, SELECT, COMMIT), the bulk of a lookup's cost (bench/lineage_overhead.py)."""
        if self.placeholder == "?":
            with self._transaction() as cur:
                yield cur
            return
        with self._lock:
            self._db.autocommit = True
            cur = self._db.cursor()
            try:
                yield cur
            finally:
                cur.close()
                self._db.autocommit = False


class _Work:
    """One thread's statements waiting for a grouped commit (`Grouped`)."""

    def __init__(self, work: Callable[[Any], Any]) -> None:
        self.work = work
        self.done = False
        self.result: Any = None
        self.error: BaseException | None = None


# PostgreSQL's "deadlock detected" and "could not serialize access": the database rolled the
# transaction back whole, and running it again is the remedy it asks for (two producers
# expiring the same oldest lineage rows at once deadlocked in ~1 run of 4 of a test).
RETRIED_STATES = frozenset({"40P01", "40001"})
ATTEMPTS = 5


def retried(exc: BaseException) -> bool:
    """Whether `exc` is a transaction the database rolled back to be run again."""
    return getattr(exc, "sqlstate", None) in RETRIED_STATES


class Grouped:
    """Transactions of several threads committed together on `owner`'s connection: on SQLite
    one commit -- one disk sync -- for what every thread queued while the one before ran (the
    spool's group commit, for a store's writes: a worker keeping each COMPLETE's lineage no
    longer waits for a sync of its own behind the others). Each `run` still returns only once
    its statements are committed, and raises their error alone: when a batch fails, each of its
    works is run again in a transaction of its own. On PostgreSQL each runs in its own
    transaction, pipelined (one round trip), run again (up to `ATTEMPTS` times, after a short
    random pause) when PostgreSQL rolled it back for a deadlock or a serialization failure."""

    def __init__(self, owner: Statements) -> None:
        self._owner = owner
        self._queued: list[_Work] = []
        self._queue_lock = threading.Lock()  # a leaf: guards `_queued` only

    def run(self, work: Callable[[Any], T]) -> T:
        """`work(cursor)` in a transaction committed with those queued meanwhile; its result."""
        owner = self._owner
        if owner.placeholder != "?":
            return self._alone(work)
        entry = _Work(work)
        with self._queue_lock:
            self._queued.append(entry)
        with owner._lock:  # the one committing now commits what queued behind it next
            if not entry.done:
                with self._queue_lock:
                    batch, self._queued = self._queued, []
                self._commit(batch)
        if entry.error is not None:
            raise entry.error
        return entry.result  # type: ignore[no-any-return]

    def _alone(self, work: Callable[[Any], T]) -> T:
        """PostgreSQL: `work` in a transaction of its own, run again if rolled back to be."""
        attempt = 1
        while True:
            try:
                with self._owner._transaction(batched=True) as cur:
                    return work(cur)
            except Exception as exc:
                if attempt == ATTEMPTS or not retried(exc):
                    raise
            time.sleep(random.uniform(0.005, 0.05) * attempt)  # the other transaction ends
            attempt += 1

    def _commit(self, batch: list[_Work]) -> None:
        db = self._owner._db
        cur = db.cursor()
        try:
            for entry in batch:
                entry.result = entry.work(cur)
            db.commit()
        except Exception:
            db.rollback()
            for entry in batch:  # each alone: only the one that fails fails
                try:
                    entry.result = entry.work(cur)
                    db.commit()
                except Exception as exc:
                    db.rollback()
                    entry.error = exc
        finally:
            cur.close()
            for entry in batch:
                entry.done = True

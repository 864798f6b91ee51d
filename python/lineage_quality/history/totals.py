"""Tables' rows and bytes kept by triggers in a totals table, so that a store's bound check reads
a few rows instead of walking its tables: the check's cost no longer follows their size.

Triggers, not the code that writes: every producer writing the tables -- an older version of
this code too -- is counted. Each counted table has a `row_bytes` column (the bytes a row counts
against its store's bound). On PostgreSQL a table's totals are spread over `SHARDS` rows (by the
writing session) and summed when read: one row would make every producer's transaction wait on
its lock. SQLite has one writer at a time: shard 0. Used by the lineage tables
(lineage/schema.py) and the history (history/store.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from lineage_quality.history.database import Statements

SHARDS = 8  # PostgreSQL: rows per table's totals

# SQLite: the one row of each table (made by `recount`) moved by each change of a row.
_SQLITE_CHANGE = (
    "UPDATE {totals} SET row_count = row_count + ({rows}), "
    "byte_count = byte_count + ({bytes}) WHERE tbl = '{table}' AND shard = 0"
)
# An upsert keeping the size moves nothing. A NULL size (a table made by hand without NOT NULL)
# counts 0, as `recount`'s SUM counts it.
_CHANGED = " WHEN NEW.row_bytes IS NOT OLD.row_bytes"
_NEW, _OLD = "COALESCE(NEW.row_bytes, 0)", "COALESCE(OLD.row_bytes, 0)"
_SQLITE_EVENTS = (
    ("insert", "INSERT", "", "1", _NEW),
    ("update", "UPDATE", _CHANGED, "0", f"{_NEW} - {_OLD}"),
    ("delete", "DELETE", "", "-1", f"-{_OLD}"),
)

# PostgreSQL: one function for the tables, its session's shard upserted (no row until needed).
_POSTGRES_FUNCTION = """CREATE OR REPLACE FUNCTION {function}() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    d_rows BIGINT;
    d_bytes BIGINT;
BEGIN
    IF TG_OP = 'INSERT' THEN
        d_rows := 1; d_bytes := COALESCE(NEW.row_bytes, 0);
    ELSIF TG_OP = 'DELETE' THEN
        d_rows := -1; d_bytes := -COALESCE(OLD.row_bytes, 0);
    ELSE
        d_rows := 0; d_bytes := COALESCE(NEW.row_bytes, 0) - COALESCE(OLD.row_bytes, 0);
    END IF;
    IF d_rows <> 0 OR d_bytes <> 0 THEN
        INSERT INTO {totals} AS t (tbl, shard, row_count, byte_count)
        VALUES (TG_TABLE_NAME, pg_backend_pid() % {shards}, d_rows, d_bytes)
        ON CONFLICT (tbl, shard) DO UPDATE SET row_count = t.row_count + excluded.row_count,
            byte_count = t.byte_count + excluded.byte_count;
    END IF;
    RETURN NULL;
END
$$"""


@attrs.frozen
class Totals:
    """The totals table `name` of `tables`, kept by triggers (on PostgreSQL through the trigger
    function `function`)."""

    name: str
    function: str
    tables: tuple[str, ...]

    @property
    def read(self) -> str:
        """A table's rows and bytes (its name the one `?`)."""
        return (
            "SELECT COALESCE(SUM(row_count), 0), COALESCE(SUM(byte_count), 0) "
            f"FROM {self.name} WHERE tbl = ?"
        )

    def ddl(self, postgres: bool) -> list[str]:
        """The totals table and the triggers keeping it (they replace any left before)."""
        ddl = [
            f"CREATE TABLE IF NOT EXISTS {self.name} (\n    tbl TEXT NOT NULL,\n"
            "    shard INTEGER NOT NULL,\n    row_count BIGINT NOT NULL,\n"
            "    byte_count BIGINT NOT NULL,\n    PRIMARY KEY (tbl, shard)\n)"
        ]
        if postgres:
            ddl.append(
                _POSTGRES_FUNCTION.format(function=self.function, totals=self.name, shards=SHARDS)
            )
            for table in self.tables:
                ddl.append(f"DROP TRIGGER IF EXISTS {table}_count ON {table}")
                ddl.append(
                    f"CREATE TRIGGER {table}_count AFTER INSERT OR UPDATE OR DELETE ON {table} "
                    f"FOR EACH ROW EXECUTE FUNCTION {self.function}()"
                )
            return ddl
        for table in self.tables:
            for name, event, when, rows, size in _SQLITE_EVENTS:
                change = _SQLITE_CHANGE.format(totals=self.name, rows=rows, bytes=size, table=table)
                ddl.append(f"DROP TRIGGER IF EXISTS {table}_{name}")
                ddl.append(
                    f"CREATE TRIGGER {table}_{name} AFTER {event} ON {table} FOR EACH ROW{when} "
                    f"BEGIN {change}; END"
                )
        return ddl

    def size(
        self, cur: Any, table: str, sql: Callable[[str], str], rows: int, size: int
    ) -> tuple[int, int]:
        """`table`'s (rows, bytes) for a bound check of `rows` and `size`: the totals, but where
        they pass a bound, a count of the table, the totals corrected by the difference. Totals
        gone stale -- a TRUNCATE, or triggers switched off on PostgreSQL, fire no row trigger --
        must never expire rows that do not pass the bound: left high, every check would expire
        the newest rows too. The count runs once per excess (the oldest 1 % of the bound then
        go), not per check."""
        cur.execute(sql(self.read), (table,))
        found, total = (int(v) for v in cur.fetchone())
        if found <= rows and total <= size:
            return found, total
        postgres = sql("?") != "?"
        shard = f"mod(pg_backend_pid(), {SHARDS})" if postgres else "0"
        # One statement, one snapshot: the table and the totals as the same transactions left
        # them (this one's own writes in both, others' uncommitted in neither), so the difference
        # is the drift alone, added to this session's shard: no lock, no other shard touched.
        cur.execute(
            sql(
                f"INSERT INTO {self.name} (tbl, shard, row_count, byte_count) "
                f"SELECT ?, {shard}, c.n - COALESCE(k.n, 0), c.b - COALESCE(k.b, 0) FROM "
                f"(SELECT COUNT(*) AS n, COALESCE(SUM(row_bytes), 0) AS b FROM {table}) AS c, "
                f"(SELECT SUM(row_count) AS n, SUM(byte_count) AS b FROM {self.name} "
                "WHERE tbl = ?) AS k WHERE TRUE "
                f"ON CONFLICT (tbl, shard) DO UPDATE SET "
                f"row_count = {self.name}.row_count + excluded.row_count, "
                f"byte_count = {self.name}.byte_count + excluded.byte_count"
            ),
            (table, table),
        )
        cur.execute(sql(self.read), (table,))
        found, total = (int(v) for v in cur.fetchone())
        return found, total

    def recount(self, cur: Any) -> None:
        """The totals from one count of each table: the caller keeps every other writer out
        until its transaction ends (so no write is counted twice or missed)."""
        cur.execute(f"DELETE FROM {self.name}")  # any left by tables dropped and made again
        for table in self.tables:
            cur.execute(
                f"INSERT INTO {self.name} (tbl, shard, row_count, byte_count) "
                f"SELECT '{table}', 0, COUNT(*), COALESCE(SUM(row_bytes), 0) FROM {table}"
            )

    def kept(self, cur: Any, postgres: bool) -> bool:
        """Whether the totals table and every trigger are there (a table dropped and made
        again loses its triggers: its totals must then be counted again)."""
        if postgres:
            cur.execute("SELECT to_regclass(%s) IS NOT NULL", (self.name,))
            if not cur.fetchone()[0]:
                return False
            cur.execute(
                "SELECT COUNT(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "WHERE c.relname = ANY(%s) AND t.tgname = ANY(%s) "
                "AND pg_table_is_visible(c.oid)",
                (list(self.tables), [f"{t}_count" for t in self.tables]),
            )
            return int(cur.fetchone()[0]) == len(self.tables)
        cur.execute(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?", (self.name,)
        )
        if not cur.fetchone()[0]:
            return False
        names = [f"{t}_{event[0]}" for t in self.tables for event in _SQLITE_EVENTS]
        marks = ", ".join("?" for _ in names)
        cur.execute(
            f"SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ({marks})",
            names,
        )
        return int(cur.fetchone()[0]) == len(names)

    def keep(self, store: Statements) -> None:
        """The totals and their triggers in `store`'s database, made with one count of each
        table for a store written before them (or whose table was dropped and made again: its
        triggers went with it) while every other writer waits (SQLite: the write transaction;
        PostgreSQL: the tables locked)."""
        postgres = store.placeholder != "?"
        with store._transaction() as cur:
            if self.kept(cur, postgres):
                return
        with store._transaction() as cur:
            if postgres:
                cur.execute(f"LOCK TABLE {', '.join(self.tables)} IN SHARE ROW EXCLUSIVE MODE")
            elif not store._db.in_transaction:
                cur.execute("BEGIN IMMEDIATE")
            if self.kept(cur, postgres):  # another producer made them meanwhile
                return
            for statement in self.ddl(postgres):
                cur.execute(statement)
            self.recount(cur)

"""Reading the history store's rows back, each value checked against its column's type.

The store is a file (or a shared database) anyone with access may have written: a crafted
`lq_history` can hold text where a number belongs, NULL where a value must be, a blob, or lack
a column. SQLite keeps whatever it is given (a column's type is only its affinity), so a value
is checked as it is read: a bad one is a `HistoryUnreadable` naming the store, the table, the
row (its key) and the column, never a traceback and never a value silently taken for another
(`str(None)` is not a run id). The `history` viewer exits 2 with that message; an evaluation
makes its history rules ERRORs saying the history is unreadable (judge.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from lineage_quality.errors import HistoryUnreadable
from lineage_quality.history.database import first_line
from lineage_quality.inert import inert, truncate

SHOWN = 60  # characters of a bad value (or a key) shown in a message
_KINDS = {type(None): "NULL", str: "text", bytes: "a blob", int: "an integer", float: "a real"}


def _shown(value: Any) -> str:
    return truncate(inert(repr(value)), SHOWN)


def unreadable(where: str, what: str, exc: BaseException) -> HistoryUnreadable:
    """The database refused a read (a missing column, not a database): naming the store."""
    return HistoryUnreadable(
        f"{where}: the history is unreadable: {what}: {inert(first_line(exc))}"
    )


@attrs.frozen
class Row:
    """One row of `table` in the store at `where`, its values by column; `key`: the columns
    that name it in messages (dataset, rule, run)."""

    where: str
    table: str
    values: Mapping[str, Any]
    key: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, where: str, table: str, columns: Sequence[str], row: Sequence[Any],
        key: tuple[str, ...] = (),
    ) -> Row:  # fmt: skip
        return cls(where, table, dict(zip(columns, row, strict=True)), key)

    def _bad(self, column: str, wanted: str) -> HistoryUnreadable:
        value = self.values[column]
        kind = _KINDS.get(type(value), type(value).__name__)
        shown = "" if value is None else f" {_shown(value)}"
        named = [f"{c} {_shown(v)}" for c in self.key if isinstance(v := self.values[c], str)]
        row = f"the row ({', '.join(named)})" if named else "a row"
        return HistoryUnreadable(
            f"{self.where}: the history is unreadable: {self.table}, {row}: {column} holds"
            f"{shown} ({kind}), not {wanted}"
        )

    def optional_text(self, column: str) -> str | None:
        value = self.values[column]
        if value is not None and not isinstance(value, str):
            raise self._bad(column, "a text")
        return value

    def text(self, column: str) -> str:
        value = self.values[column]
        if not isinstance(value, str):
            raise self._bad(column, "a text")
        return value

    def optional_whole(self, column: str) -> int | None:
        """A whole number (a time in ms, a count), or NULL; a float holding one is taken."""
        value = self.values[column]
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._bad(column, "a whole number")
        return value

    def whole(self, column: str) -> int:
        value = self.optional_whole(column)
        if value is None:
            raise self._bad(column, "a whole number")
        return value

    def optional_real(self, column: str) -> float | None:
        value = self.values[column]
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._bad(column, "a number")
        return float(value)

"""What users said about a rule's history (accept, undo, rebaseline: feedback.py), kept by the
history store in `lq_history_feedback`: one row per record with who, when and why, bounded by the
store's retention and by `MAX_FEEDBACK` rows (the oldest go)."""

from __future__ import annotations

import time
from typing import Any

from lineage_quality.errors import ConfigError
from lineage_quality.history.database import Statements
from lineage_quality.history.feedback import Action, Feedback
from lineage_quality.history.names import MAX_RUN_ID, cut, key
from lineage_quality.history.rows import Row

FEEDBACK_TABLE = """CREATE TABLE IF NOT EXISTS lq_history_feedback (
    dataset TEXT NOT NULL,
    rule_id TEXT NOT NULL,
    action TEXT NOT NULL,
    run_id TEXT,
    since_ms BIGINT,
    by_whom TEXT NOT NULL,
    why TEXT NOT NULL,
    at_ms BIGINT NOT NULL
)"""
FEEDBACK_INDEX = (
    "CREATE INDEX IF NOT EXISTS lq_history_feedback_rule "
    "ON lq_history_feedback (dataset, rule_id, at_ms)"
)
FEEDBACK_COLUMNS = "dataset, rule_id, action, run_id, since_ms, by_whom, why, at_ms"
MAX_FEEDBACK = 100_000  # feedback rows kept at most (the oldest go)
MAX_WHY = 1000  # characters of a feedback's why (and 128 of its who)
FEEDBACK_NEEDED = {c.strip() for c in FEEDBACK_COLUMNS.split(",")}
_ACTIONS = frozenset(a.value for a in Action)


class FeedbackRecords(Statements):
    """The history store's feedback records (SqlHistory inherits them)."""

    read_only: bool
    bounds: Any  # HistoryBounds: its retention
    where: str

    def _read(self, table: str, query: str, args: Any = ()) -> list[Any]:
        """One SELECT's rows (SqlHistory's, which names the store in its errors)."""
        raise NotImplementedError

    def record(self, feedback: Feedback) -> None:
        """Keep one feedback record (accept, undo, rebaseline); the oldest past the bounds go."""
        if self.read_only:
            raise ConfigError("this history store was opened read-only")
        row = (
            key(feedback.dataset),
            key(feedback.rule_id),
            feedback.action.value,
            None if feedback.run_id is None else key(feedback.run_id, MAX_RUN_ID),
            feedback.since_ms,
            cut(feedback.by, 128) or "",
            cut(feedback.why, MAX_WHY) or "",
            feedback.at_ms,
        )
        now = int(time.time() * 1000)
        with self._transaction() as cur:
            cur.execute(
                self._sql(
                    f"INSERT INTO lq_history_feedback ({FEEDBACK_COLUMNS}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                ),
                row,
            )
            oldest_kept = now - int(self.bounds.retention_days * 86_400_000)
            cur.execute(
                self._sql("DELETE FROM lq_history_feedback WHERE at_ms < ?"), (oldest_kept,)
            )
            cur.execute("SELECT COUNT(*) FROM lq_history_feedback")
            excess = int(cur.fetchone()[0]) - MAX_FEEDBACK
            if excess > 0:
                cur.execute(
                    self._sql(
                        "DELETE FROM lq_history_feedback WHERE at_ms <= (SELECT MAX(at_ms) FROM "
                        "(SELECT at_ms FROM lq_history_feedback ORDER BY at_ms LIMIT ?) AS o)"
                    ),
                    (excess,),
                )

    def feedback(self, dataset: str, rule_id: str | None = None) -> list[Feedback]:
        """The feedback records of the dataset's rule (every rule: None), oldest first; none
        from a store written before feedback was kept."""
        where, args = "dataset = ?", [key(dataset)]
        if rule_id is not None:
            where += " AND rule_id = ?"
            args.append(key(rule_id))
        if self.read_only and not self._has_feedback_table():
            return []  # an older store, opened by the viewer: nothing was said
        query = f"SELECT {FEEDBACK_COLUMNS} FROM lq_history_feedback WHERE {where} ORDER BY at_ms"
        columns = [c.strip() for c in FEEDBACK_COLUMNS.split(",")]
        records = []
        for values in self._read("lq_history_feedback", query, args):
            row = Row.of(
                self.where, "lq_history_feedback", columns, values, ("dataset", "rule_id", "run_id")
            )
            action = row.text("action")
            if action not in _ACTIONS:
                continue  # a kind of record a later version may add
            records.append(
                Feedback(
                    dataset=row.text("dataset"),
                    rule_id=row.text("rule_id"),
                    action=Action(action),
                    run_id=row.optional_text("run_id"),
                    since_ms=row.optional_whole("since_ms"),
                    by=row.text("by_whom"),
                    why=row.text("why"),
                    at_ms=row.whole("at_ms"),
                )
            )
        return records

    def _has_feedback_table(self) -> bool:
        try:
            with self._transaction() as cur:
                cur.execute("SELECT * FROM lq_history_feedback LIMIT 0")
        except Exception:
            return False
        return True

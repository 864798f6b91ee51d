"""Quality over time: every evaluation's measured values kept in a bounded store (SQLite, or
PostgreSQL shared between processes), and history rules that compare a measurement with the
past (rules/history.py)."""

from lineage_quality.history.feedback import Action, Feedback, FeedbackState
from lineage_quality.history.judge import judge_and_record
from lineage_quality.history.points import Point
from lineage_quality.history.store import HistoryBounds, HistoryStore, Measured, open_history
from lineage_quality.history.verdicts import history_verdict

__all__ = [
    "Action",
    "Feedback",
    "FeedbackState",
    "HistoryBounds",
    "HistoryStore",
    "Measured",
    "Point",
    "history_verdict",
    "judge_and_record",
    "open_history",
]

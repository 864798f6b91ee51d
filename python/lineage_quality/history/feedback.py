"""What users said about a rule's history: "this failed run is normal" (accept, and its undo)
and "start this rule's baseline over from T" (rebaseline). Pure: the records and what they add
up to; the store keeps them (store.py, table `lq_history_feedback`), the CLI writes them
(cli/history.py), baselines read them (baseline.py).

Records are never edited: each is who said what, when and why. What holds is the latest record
of its kind: per run, the latest accept or undo; per rule, the latest rebaseline (a later one
with an earlier `since` moves the start back again).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

import attrs

from lineage_quality.history.times import iso_ms


class Action(enum.Enum):
    ACCEPT = "accept"  # a failed run is normal: it joins later baselines
    UNDO = "undo"  # an accept taken back
    REBASELINE = "rebaseline"  # the rule's baseline starts over at `since_ms`


@attrs.frozen
class Feedback:
    """One record: `run_id` for accept and undo, `since_ms` for rebaseline."""

    dataset: str
    rule_id: str
    action: Action
    by: str
    why: str
    at_ms: int
    run_id: str | None = None
    since_ms: int | None = None

    def describe(self) -> str:
        what = {
            Action.ACCEPT: f"accepted run {self.run_id} as normal",
            Action.UNDO: f"took back the accept of run {self.run_id}",
            Action.REBASELINE: "started the baseline over from "
            + iso_ms(self.since_ms if self.since_ms is not None else 0),
        }[self.action]
        return f"{iso_ms(self.at_ms)} {self.by}: {what}: {self.why}"


@attrs.frozen
class FeedbackState:
    """What a rule's records add up to: the runs accepted now, and where its baseline starts."""

    accepted: frozenset[str] = frozenset()
    since_ms: int | None = None
    accepted_by: tuple[tuple[str, str], ...] = ()  # (run id, who) of the accepts that hold

    @classmethod
    def of(cls, records: Iterable[Feedback]) -> FeedbackState:
        latest: dict[str, Feedback] = {}
        since: Feedback | None = None
        for record in sorted(records, key=lambda r: r.at_ms):
            if record.action is Action.REBASELINE:
                since = record
            elif record.run_id is not None:
                latest[record.run_id] = record
        accepts = {run: r.by for run, r in latest.items() if r.action is Action.ACCEPT}
        return cls(
            frozenset(accepts),
            None if since is None else since.since_ms,
            tuple(sorted(accepts.items())),
        )


NO_FEEDBACK = FeedbackState()

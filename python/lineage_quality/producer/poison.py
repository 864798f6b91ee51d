"""Events whose handling fails (not their sink: forward.py's Delivery retries that): what decides
whether to try again or to move the event to the dead letters.

Nothing an event holds may hold a worker for good (issue 44: one NaN retried every 0.5 s, forever,
held its worker; `--workers` such events stopped all forwarding). A failure that the same event
will always meet again (it cannot be encoded, parsed or enriched: `deterministic`) dead-letters it
at once; any other (a spool or disk error) is retried with the back-off, and dead-lettered after
`poison_after` failures in a row."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from lineage_quality.producer.backoff import Backoff
from lineage_quality.producer.run_verdicts import run_ids
from lineage_quality.results import Status
from lineage_quality.rules import Action
from lineage_quality.values.event import Event

# Raised the same way by the same event: what it holds cannot be encoded, parsed or enriched (a
# programming error meets the same event the same way). Retrying cannot help.
_DETERMINISTIC = (
    ValueError,  # UnicodeError, JSON encoding/decoding, int() of digits past Python's limit
    TypeError,
    LookupError,
    AttributeError,
    RecursionError,
    ArithmeticError,
    AssertionError,
)
_KEPT = 1024  # failing events remembered at once (only those failing right now)
log = logging.getLogger(__name__)


def deterministic(exc: BaseException) -> bool:
    """Whether handling the same event again would raise the same way; an sqlite3 or OS error
    (a locked or full disk) may pass."""
    return isinstance(exc, _DETERMINISTIC) and not isinstance(exc, sqlite3.Error | OSError)


def waits_for_the_disk(exc: BaseException) -> bool:
    """A locked or full database: retried for as long as it lasts, never counted towards
    dead-lettering (a `dead-letters purge` holding the lock must not bury valid events)."""
    return isinstance(exc, sqlite3.OperationalError)


def unjudged_row(event: Mapping[str, Any], reason: str, blocks: bool) -> dict[str, Any]:
    """The verdict row (run_verdicts.verdict_rows' shape) of a COMPLETE moved to the dead letters
    before its rules were judged: an ERROR, so `gate` never passes its run (a BLOCK one when a
    rule bound to it blocks)."""
    return {
        "job": Event.of(event).job_label,
        "dataset": "(the event)",
        "role": "",
        "rule": "(not evaluated)",
        "status": Status.ERROR.value,
        "action": (Action.BLOCK if blocks else Action.ALERT).value,
        "severity": None,
        "expected": "the event's rules judged",
        "actual": None,
        "message": f"the COMPLETE event could not be handled and is in the dead letters: {reason}",
    }


def describe(exc: BaseException) -> str:
    """One line: the exception's type and the first line of its message, cut at 300."""
    lines = str(exc).strip().splitlines()
    first = lines[0][:300] if lines else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


class Troubles:
    """Failures in a row per event id, bounded; `failed` says what to do after one."""

    def __init__(self, poison_after: int, retry: Backoff) -> None:
        self.poison_after = poison_after
        self.retry = retry
        self._counts: dict[int, int] = {}
        self._lock = threading.Lock()

    def succeeded(self, event_id: int) -> None:
        with self._lock:
            self._counts.pop(event_id, None)

    def failed(self, event_id: int, exc: BaseException) -> tuple[int, float | None]:
        """(failures in a row, seconds to wait before trying again); None: give up now."""
        with self._lock:
            count = self._counts.pop(event_id, 0) + (0 if waits_for_the_disk(exc) else 1)
            if deterministic(exc) or count >= self.poison_after:
                return count, None
            if len(self._counts) >= _KEPT:
                self._counts.clear()
            self._counts[event_id] = count
        return count, self.retry.delay(max(count - 1, 0))


class _Verdicts(Protocol):
    def add_verdicts(self, run_ids: Sequence[str], body: str) -> None: ...


class _Binder(Protocol):
    def bound(self, event: Mapping[str, Any]) -> Mapping[Any, Sequence[Any]]: ...


def keep_unjudged(spool: _Verdicts, evaluator: _Binder, event: Any, reason: str) -> None:
    """Keep `unjudged_row` for the runs of `event` when it is a COMPLETE with rules bound (or
    whose datasets cannot even be bound: it may have had some)."""
    if not isinstance(event, dict) or not Event.of(event).complete:
        return
    try:
        groups = [g for gs in evaluator.bound(event).values() for g in gs]
        if not groups:
            return
        blocks = any(r.effective_action is Action.BLOCK for g in groups for r in g.rules)
    except Exception:  # what cannot be bound may have blocked
        blocks = True
    ids = run_ids(event)
    try:
        if ids:
            spool.add_verdicts(ids, json.dumps([unjudged_row(event, reason, blocks)]))
    except (sqlite3.Error, ValueError) as exc:
        log.warning("could not keep the ERROR verdict of run %s: %s", ids[0], exc)

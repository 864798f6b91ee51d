"""Events whose handling fails (not their sink: forward.py's Delivery retries that): what decides
whether to try again or to move the event to the dead letters.

Nothing an event holds may hold a worker for good (issue 44: one NaN retried every 0.5 s, forever,
held its worker; `--workers` such events stopped all forwarding). A failure that the same event
will always meet again (it cannot be encoded, parsed or enriched: `deterministic`) dead-letters it
at once; any other (a spool or disk error) is retried with the back-off, and dead-lettered after
`poison_after` failures in a row."""

from __future__ import annotations

import sqlite3
import threading

from lineage_quality.producer.backoff import Backoff

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


def deterministic(exc: BaseException) -> bool:
    """Whether handling the same event again would raise the same way; an sqlite3 or OS error
    (a locked or full disk) may pass."""
    return isinstance(exc, _DETERMINISTIC) and not isinstance(exc, sqlite3.Error | OSError)


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
            count = self._counts.pop(event_id, 0) + 1
            if deterministic(exc) or count >= self.poison_after:
                return count, None
            if len(self._counts) >= _KEPT:
                self._counts.clear()
            self._counts[event_id] = count
        return count, self.retry.delay(count - 1)

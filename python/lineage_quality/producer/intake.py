"""What the receiver hands each accepted event to (`Accept`), and the producer's own one:
`Intake`, forwarded at once when it needs nothing else and the sink is fast (write_through.py),
else stored in the spool. The in-driver producer passes another (driver/runtime.py: its own
Spark work filtered out first) as `Producer(accept=...)`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from lineage_quality import rawjson
from lineage_quality.producer.backoff import status_refuses_for_good
from lineage_quality.producer.events import lane_of
from lineage_quality.producer.metrics import Metrics
from lineage_quality.producer.run_verdicts import run_ids
from lineage_quality.producer.spool import Spool
from lineage_quality.producer.write_through import WriteThrough

EVALUATED_TYPES = frozenset({"COMPLETE"})

# (body, event): the text as received and its parse by the receiver (None: parse it here)
Accept = Callable[[str, Any], None]


class Bound(Protocol):
    def bound(self, event: Any) -> Any: ...


class Intake:
    def __init__(
        self,
        spool: Spool,
        evaluator: Bound,
        write_through: WriteThrough,
        metrics: Metrics,
        count: Callable[[str], None],
    ) -> None:
        self.spool = spool
        self.evaluator = evaluator
        self.write_through = write_through
        self.metrics = metrics
        self._count = count  # one more "forwarded" or "forward_failures"

    def accept(self, body: str, event: Any) -> None:
        """Keep one event: forwarded at once when it needs nothing else and the sink is fast
        (write_through.py), else stored in the spool. `event` is `body` parsed (by the receiver,
        which validated it), or None to parse it here. A COMPLETE (to evaluate) or a FAIL (to
        remember) is handed to the worker parsed, with its body: an event is parsed once."""
        ids: list[str] = []
        complete, lane, event_type, kept = False, None, None, None
        if event is None:
            event = parse(body)
        if isinstance(event, dict):
            ids = run_ids(event)
            kind = event.get("eventType")
            event_type = kind if isinstance(kind, str) else ""
            complete = kind in EVALUATED_TYPES
            lane = lane_of(event)
            if complete or kind == "FAIL":
                kept = event
            if self.write_through.wanted() and (
                kept is None or (complete and not self.evaluator.bound(event))
            ):
                self._write_through(body, ids, complete, lane, event_type, kept)
                return
            # after an event of its run being written through, which may end up spooled
            self.spool.wait_direct(lane)
        self._spool(body, ids, complete, lane, event_type, kept)

    def _write_through(
        self,
        body: str,
        ids: list[str],
        complete: bool,
        lane: str,
        event_type: str | None,
        kept: Any,
    ) -> None:
        """To the sink before its 201, its lane held; else spooled (write_through.py)."""
        spool = self.spool
        if not spool.begin_direct(lane):
            self._spool(body, ids, complete, lane, event_type, kept)
            return
        try:
            status = self.write_through.send(body)
            if 200 <= status < 300:
                self.metrics.events_received.inc()
                self.metrics.events_written_through.inc()
                self._count("forwarded")
                spool.forwarded_directly(ids)
                return
            self._count("forward_failures")
            # spooled before the lane's next event (still held); a refusal counts to dead letters
            refused = 1 if status_refuses_for_good(status) else 0
            self._spool(body, ids, complete, lane, event_type, kept, refused)
        finally:
            spool.end_direct(lane)

    def _spool(
        self,
        body: str,
        ids: list[str],
        complete: bool,
        lane: str | None,
        event_type: str | None,
        kept: Any,
        refused: int = 0,
    ) -> None:
        # durable before the receiver answers 201; the run is recorded in the same transaction
        self.spool.put(body, ids, +1 if complete else 0, lane, event_type, kept, refused)
        self.metrics.events_received.inc()


def parse(body: str) -> Any:
    """`body` parsed as the receiver parses it (rawjson: numbers as written, NaN/Infinity
    refused), for an event read back from the database; None: not JSON."""
    try:
        return rawjson.loads(body)
    except ValueError:
        return None

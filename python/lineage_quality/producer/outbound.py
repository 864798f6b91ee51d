"""`Outbound`: events handed to a sink that answers later (Kafka out: kafka/transport.py's
`produce`), the worker going on without waiting for each answer.

Waiting for the broker's acknowledgement of each event before taking the next one bounds a worker
to one event per round trip. Here a worker hands the event over and goes on with its lane (the
spool's lanes, lanes.py: the event is *out*, never handed out again); the answer comes on the
transport's reports thread, and:

- **Deleted only once taken, in order.** A lane's answers are settled in the order its events
  were sent: an event leaves the spool (its delete riding with the next commit) only once it and
  every event sent before it in its lane were taken. A kill -9 at any point loses nothing: what
  was not settled is in the spool, sent again after the restart (at least once).
- **A failure is retried in order.** An event the sink did not take stays in the spool, counted
  as attempted; nothing more of its lane is sent, and once every answer of the lane came, the lane
  is taken again from that event on: a retry, which waits for its answer with the back-off and
  the dead-lettering of forward.py's `Delivery`; events after it that were taken meanwhile are
  sent again after it (at least once, the run's order kept).
- **Bounded.** At most `settings.delivery.max_in_flight` events are out at once; a worker waits
  for room before handing over another.

Only a transport that keeps a partition's order through its own retries offers this (`pipelined`:
Kafka with idempotence); every other sink waits for each answer, as before.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from lineage_quality.producer.backoff import refused_for_good
from lineage_quality.producer.spool import Spool, SpooledEvent

log = logging.getLogger(__name__)

_ROOM_POLL = 0.1  # s: how soon a worker waiting for room sees the stop
# Refusal counts kept for retries to come: an event settled by another path (dead-lettered,
# deleted) never asks for its count, so the oldest are forgotten past this. A forgotten count
# only lets its event be refused once more before it is dead-lettered.
MAX_REFUSED = 10_000


class Pipelined(Protocol):
    """A transport that hands an event over and tells its outcome later."""

    pipelined: bool

    def produce(self, text: str, event: Any, told: Callable[[Exception | None], None]) -> None: ...


def pipelined(transport: Any) -> Pipelined | None:
    """`transport` when it may take a run's events without waiting for each answer."""
    if getattr(transport, "pipelined", False) and callable(getattr(transport, "produce", None)):
        return transport  # type: ignore[no-any-return]
    return None


class Outbound:
    """The events out to `transport`: at most `limit` at once; `count(name)` told of each
    `forwarded` and `forward_failures`; `stop` ends a wait for room."""

    def __init__(
        self,
        transport: Pipelined,
        spool: Spool,
        limit: int,
        count: Callable[[str], None],
        stop: threading.Event,
    ) -> None:
        self.transport = transport
        self.spool = spool
        self.limit = max(1, limit)
        self._count = count
        self._stop = stop
        self._room = threading.Condition()  # a leaf: no other lock is taken while holding it
        self._out = 0
        # per event out: (lane, run ids, step) for its delete
        self._facts: dict[int, tuple[str, tuple[str, ...], int]] = {}
        # events the sink refused for good when handed over: counted towards dead_letter_after
        # by their retry (`refusals`); at most one entry per event retried
        self._refused: dict[int, int] = {}

    @property
    def out(self) -> int:
        """Events handed over and not answered yet."""
        with self._room:
            return self._out

    def send(self, item: SpooledEvent, body: str, event: Any, run_ids: Sequence[str],
             step: int) -> None:  # fmt: skip
        """Hand `item` (its body `body`, parsed `event` or None) over without waiting for its
        answer, once there is room; deleted once taken, recording `run_ids` and `step` (as
        `Spool.done`). Not sent when stopping, or when its lane was settled meanwhile (lanes.py,
        `sending`: the caller's `go_on` gives the lane's next event)."""
        with self._room:
            while self._out >= self.limit:
                if self._stop.is_set():
                    return
                self._room.wait(_ROOM_POLL)
            self._out += 1
        if not self.spool.sending(item):
            self._answered()
            return
        self._facts[item.id] = (item.lane, tuple(run_ids), step)
        try:
            self.transport.produce(body, event, lambda error: self._told(item.id, error))
        except Exception as exc:  # not even queued: a failed delivery, settled as one
            self._told(item.id, exc)

    def refusals(self, event_id: int) -> int:
        """How many times the sink refused event `event_id` for good when it was handed over
        (forgotten once asked: its retry counts on from there)."""
        return self._refused.pop(event_id, 0)

    def _told(self, event_id: int, error: Exception | None) -> None:
        """The answer for event `event_id` (None: taken): the lane's answers settled in order."""
        try:
            lane = self._facts[event_id][0]
            if error is not None:  # before the lane is settled: its retry knows
                if refused_for_good(error):
                    self._refused[event_id] = self._refused.get(event_id, 0) + 1
                    while len(self._refused) > MAX_REFUSED:  # the oldest first (insertion order)
                        del self._refused[next(iter(self._refused))]
                self.spool.attempted(event_id)
                self._count("forward_failures")
            taken, failed, again = self.spool.reported(lane, event_id, error is None)
            for done in taken:
                _, run_ids, step = self._facts.pop(done)
                self.spool.done(done, run_ids, step, ride=True)  # never waits for a commit
                self._count("forwarded")
            for settled in (*failed, *again):  # attempted when told; sent again in order
                self._facts.pop(settled, None)
            if error is not None:
                said = str(error).strip().splitlines()
                log.warning(
                    "forwarding event %d failed: %s; retrying in its run's order, from it on",
                    event_id,
                    said[0][:300] if said else type(error).__name__,
                )
        except Exception:  # never lost: the event stays in the spool
            log.exception("settling the answer for event %d failed", event_id)
        finally:
            self._answered()

    def _answered(self) -> None:
        with self._room:
            self._out -= 1
            self._room.notify()

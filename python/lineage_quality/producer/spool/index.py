"""What the spool holds, in memory: every stored event's lane and size, each lane's ids oldest
first, the counts checked against the spool's bound, and the events put by this process kept as
received (up to MEMORY_BYTES) so that a worker takes them without reading the database.

Read once from the database at open, then kept in step with every commit. Everything here is
guarded by `lock` (see the lock order in the package's docstring); the lane scheduler's conditions
(lanes.py) share it.
"""

from __future__ import annotations

import collections
import logging
import threading
from typing import Any

import attrs

from lineage_quality.producer.spool.store import SpoolFullError

log = logging.getLogger(__name__)

# Events put by this process are also kept in memory, up to this many bytes of their bodies, until
# they leave the spool, are attempted or enriched: a worker then takes them without reading the
# database, and without parsing them (see `Kept.event_type`, `Kept.event`). 64 MiB: a burst of
# a few thousand listener events (~3.6 KB each, a COMPLETE kept parsed) is not read back and
# parsed again (at 16 MiB a 3,000-event burst from Kafka was, in part).
MEMORY_BYTES = 64 * 1024 * 1024
# An event kept parsed costs this many times its body's bytes (Python objects: ~3.4x for a real
# listener event); counted so against MEMORY_BYTES.
PARSED_COST = 4


@attrs.frozen
class Kept:
    """An event as the receiver handed it over: its body, eventType ("" when it has none), run
    ids, size in bytes, and the event parsed (None when not kept)."""

    body: str
    event_type: str
    run_ids: tuple[str, ...]
    size: int
    event: Any = None
    refused: int = 0  # refusals for good by the sink already (a write-through attempt)

    @property
    def cost(self) -> int:
        """Bytes counted against MEMORY_BYTES."""
        return self.size if self.event is None else self.size * PARSED_COST


class Index:
    """Bounded by `max_events` and `max_bytes` (None: no bound); warns once past `warn_ratio` of
    the bound, and again once it has come back under 3/4 of that."""

    def __init__(self, max_events: int | None, max_bytes: int | None, warn_ratio: float) -> None:
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.warn_ratio = warn_ratio
        self.lock = threading.Lock()
        self.events: dict[int, tuple[str, int]] = {}  # id -> (lane, size), every stored event
        self.lanes: dict[str, collections.deque[int]] = {}  # lane -> its ids, oldest first
        # lane -> how many of its oldest ids are out: sent without waiting for the sink's answer
        # (lanes.py, `sending`), not handed out again; dropped with the lane
        self.out: dict[str, int] = {}
        self.count = 0
        self.bytes = 0
        self._memory: dict[int, Kept] = {}
        self._memory_bytes = 0
        self._warned = False

    # -- the bound ------------------------------------------------------------------------------

    def ratio(self, count: int, size: int) -> float:
        """How full `count` events of `size` bytes would make the spool (1.0: at its bound)."""
        ratios = [0.0]
        if self.max_events:
            ratios.append(count / self.max_events)
        if self.max_bytes:
            ratios.append(size / self.max_bytes)
        return max(ratios)

    def admit(self, count: int, size: int) -> None:
        """Raise SpoolFullError when holding `count` events of `size` bytes would pass the
        bound."""
        if self.ratio(count, size) > 1.0:
            raise SpoolFullError(
                f"spool full ({self.count} events, {self.bytes} bytes); retry later"
            )

    def _check_level(self) -> None:
        ratio = self.ratio(self.count, self.bytes)
        if ratio >= self.warn_ratio and not self._warned:
            self._warned = True
            log.warning(
                "spool is %.0f%% full (%d events, %d bytes; bound %s events, %s bytes): the sink "
                "is not keeping up; new events get 503 once it is full",
                ratio * 100,
                self.count,
                self.bytes,
                self.max_events or "-",
                self.max_bytes or "-",
            )
        elif ratio < self.warn_ratio * 0.75 and self._warned:
            self._warned = False
            log.info("spool back to %.0f%% of its bound", ratio * 100)

    # -- stored events (caller holds `lock`) ----------------------------------------------------

    def add(self, event_id: int, lane: str, size: int) -> None:
        self.events[event_id] = (lane, size)
        self.lanes.setdefault(lane, collections.deque()).append(event_id)  # ids only grow
        self.count += 1
        self.bytes += size
        self._check_level()

    def remove(self, event_id: int) -> None:
        self.forget(event_id)
        known = self.events.pop(event_id, None)
        if known is None:
            return
        lane, size = known
        ids = self.lanes[lane]
        if ids[0] == event_id:
            ids.popleft()
            at = 0
        else:
            at = ids.index(event_id)
            del ids[at]
        out = self.out.get(lane, 0)
        if at < out:  # one of the lane's events out left
            if out > 1:
                self.out[lane] = out - 1
            else:
                del self.out[lane]
        if not ids:
            del self.lanes[lane]
            self.out.pop(lane, None)
        self.count -= 1
        self.bytes -= size
        self._check_level()

    def resize(self, event_id: int, size: int) -> None:
        known = self.events.get(event_id)
        if known is not None:
            self.events[event_id] = (known[0], size)
            self.bytes += size - known[1]
            self._check_level()

    def head(self, lane: str) -> int | None:
        """The oldest event of `lane` that is not out (None: none)."""
        ids = self.lanes.get(lane)
        if not ids:
            return None
        out = self.out.get(lane, 0)
        return ids[out] if len(ids) > out else None

    def lane(self, event_id: int) -> str | None:
        known = self.events.get(event_id)
        return None if known is None else known[0]

    # -- events kept as received (caller holds `lock`) ------------------------------------------

    def remember(self, event_id: int, kept: Kept) -> None:
        if self._memory_bytes + kept.cost <= MEMORY_BYTES:
            self._memory[event_id] = kept
            self._memory_bytes += kept.cost

    def forget(self, event_id: int) -> None:
        """The stored event is no longer as received (attempted, enriched) or gone."""
        kept = self._memory.pop(event_id, None)
        if kept is not None:
            self._memory_bytes -= kept.cost

    def kept(self, event_id: int) -> Kept | None:
        return self._memory.get(event_id)

"""Who forwards which lane: the spool's whole lane scheduling policy.

Each event travels in a lane (its run, `events.lane_of`): a run's events go out in arrival order,
other runs pass it. The policy, in full:

- **A lane is held by one worker at a time.** `claim` hands out the oldest event of a lane nobody
  holds (nor at or behind a follow-up held for its evaluation, `hold`), and the caller holds its
  lane until it lets go.
- **A worker stays on its lane for a while.** Done with an event, a worker takes the lane's next
  one at once (`go_on`: no handoff to another thread, a run's events go out back to back), up to
  LANE_STREAK events in a row; then the lane goes back to the pool, and older lanes get a worker.
- **One wakeup per lane that got work, and only when needed.** After a commit, at most one idle
  worker is woken per lane that got a claimable event and nobody holds (`stored`). While a worker
  took its event less than `helper_after` (HELPER_AFTER) ago and waits for nothing, none is: it
  will be back for more soon, and on 2 cores a second worker forwarding at once only contends for
  the GIL (bench/passthrough.py: 1 worker ~1,880 events/s, 4 woken per lane ~1,410).
- **A lane written through is nobody else's.** While the receiver forwards an event of a lane
  itself (write_through.py), no worker claims the lane and another event of it waits for the
  outcome (`begin_direct`, `end_direct`): the run's order holds whichever way each event goes.
- **Slow or waiting workers bring in others.** A worker that `park`s (waits for an evaluation, or
  before retrying its sink) wakes another one if another lane has work; so does a worker whose
  last event kept it longer than `helper_after` (a slow sink, a backlog after an outage) when it
  takes its next one (`_took`).

- **The oldest free lane without a scan.** Each lane that may be claimable has an entry (its
  oldest event not out, the lane) in a heap (`_heads`), cleaned lazily: an entry whose lane is
  held, or whose head moved on, is dropped or fixed when it comes to the top. Every change that
  can make a lane claimable (let go, a first event, a follow-up or a write-through ended, its
  events out settled) offers the lane again (`offer`), so a claim costs O(log lanes) instead of
  a scan over every lane (the same choice as the scan: tests/unit/test_lane_index.py).
- **Events out, in order.** A sink that takes events without the sender waiting for each answer
  (Kafka out: producer/outbound.py) is handed a lane's events one after the other (`sending`), at
  most `window` (RUN_WINDOW) of a lane at once: they are out, not handed out again, until their
  answers are settled (`reported`), in the lane's order: an event is deleted only once it and
  every event sent before it in its lane were taken; then the lane is offered again.
  When one was not, the lane is broken: nothing more of it is sent, and once every answer of it
  came, it is claimable again from that event on (taken again, in order; those after it that
  were taken are sent again: at least once).

Everything is guarded by the index's lock (index.py), shared by the three conditions here:
`changed` (workers: something to claim), `emptied` (`wait_empty`: its own, so a spool that
drains after each event wakes no idle worker) and `direct_ended`.
"""

from __future__ import annotations

import collections
import contextlib
import heapq
import threading
import time
from collections.abc import Iterator
from typing import Any

from lineage_quality.producer.spool.index import Index

# A worker that took its event less than this long ago is about to come back for more: an event
# of another lane waits for it rather than waking a second worker (see the module docstring).
HELPER_AFTER = 0.002  # seconds
LANE_STREAK = 16  # events of one lane a worker handles in a row before it claims afresh
# Events of one lane out at once (sent, no answer yet). 1: a run's next event is sent once the
# sink took the one before it; workers do not wait meanwhile, they take other runs' events. More
# would not keep a run's order: librdkafka keeps a partition's order through its own retries,
# but when the broker refuses a batch for good (an event over the topic's max.message.bytes
# fails the events batched with it) a later batch of the same run may already be written.
RUN_WINDOW = 1


class Lanes:
    def __init__(self, index: Index) -> None:
        self.index = index
        self.changed = threading.Condition(index.lock)  # workers: something to claim
        self.emptied = threading.Condition(index.lock)  # `wait_empty`
        # lanes a worker holds -> monotonic time it took its current event (see HELPER_AFTER)
        self._busy: dict[str, float] = {}
        self._parked: set[str] = set()  # busy lanes whose worker waits (evaluation, backoff)
        self.helper_after = HELPER_AFTER
        # per worker thread: `took`, when it took its last event; `streak`, events of its lane
        # taken back to back
        self._worker = threading.local()
        self._held: dict[int, str] = {}  # follow-ups waiting for their evaluation -> lane
        self._direct: set[str] = set()  # lanes whose event the receiver forwards itself
        self._putting: dict[str, int] = {}  # lanes -> puts not committed yet
        self.direct_ended = threading.Condition(index.lock)  # `begin_direct` waiting its turn
        # the lane index: (oldest event not out, lane) of lanes that may be claimable, a heap
        self._heads: list[tuple[int, str]] = []
        # lanes with events out -> [id, outcome (None: no answer yet, True: taken, False: not)]
        # of each, in the order they were sent
        self._flying: dict[str, collections.deque[list[Any]]] = {}
        self._broken: dict[str, int] = {}  # lanes whose event out was not taken -> its id
        self.window = RUN_WINDOW

    # -- taking events --------------------------------------------------------------------------

    def pick(self, timeout: float | None, claim: bool) -> tuple[int, str] | None:
        """Wait (at most `timeout` seconds, None: for ever) for an event to hand out: the oldest
        claimable one, its lane held from now on (`claim`), or the oldest of any lane. Its (id,
        lane); None past the timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        index = self.index
        with index.lock:
            while True:
                event_id = self._claimable() if claim else self._oldest()
                if event_id is not None:
                    lane = index.events[event_id][0]
                    if claim:
                        self._took(lane)
                        self._worker.streak = 0
                    return event_id, lane
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._worker.took = None  # idle from now on: not slow
                self.changed.wait(remaining)

    def go_on(self, lane: str) -> int | None:
        """For a worker holding `lane` and done with its event: the id of the lane's next event,
        the lane still held, while the worker's streak on it is under LANE_STREAK; else None,
        the lane let go (see `next_in_lane`)."""
        with self.index.lock:
            streak = getattr(self._worker, "streak", 0)
            if streak >= LANE_STREAK:
                self._let_go(lane)
                self.changed.notify()  # the lane's next event is one event for one worker
                return None
            self._worker.streak = streak + 1
            return self._next_in_lane(lane)

    def next_in_lane(self, lane: str) -> int | None:
        """For a worker holding `lane`: the id of the lane's next event, the lane still held;
        None, the lane let go, when it has nothing claimable now (no other worker to wake)."""
        with self.index.lock:
            return self._next_in_lane(lane)

    def _next_in_lane(self, lane: str) -> int | None:
        head = None if self._waits(lane) else self.index.head(lane)
        if head is not None and self._behind_held(lane, head):
            head = None  # at or behind a follow-up waiting for its evaluation
        if head is None:
            self._let_go(lane)
            return None
        self._took(lane)
        return head

    def release(self, lane: str) -> None:
        with self.index.lock:
            self._let_go(lane)
            self.changed.notify()  # the lane's next event is one event for one worker

    def _oldest(self) -> int | None:
        heads = [ids[0] for ids in self.index.lanes.values()]
        return min(heads) if heads else None

    def _claimable(self) -> int | None:
        """The oldest event of a lane no worker holds, not out, and not at or behind a held
        follow-up: the top of the lane index, once its stale entries are dropped or fixed."""
        heads = self._heads
        while heads:
            head, lane = heads[0]
            now = self._free_head(lane)
            if now is None:
                heapq.heappop(heads)
            elif now != head:
                heapq.heapreplace(heads, (now, lane))
            else:
                return head
        return None

    def _free_head(self, lane: str) -> int | None:
        """`lane`'s oldest event not out, when the lane is claimable (else None)."""
        if lane in self._busy or lane in self._direct or self._waits(lane):
            return None
        head = self.index.head(lane)
        if head is None or self._behind_held(lane, head):
            return None
        return head

    def _waits(self, lane: str) -> bool:
        """`lane` sends nothing more now: it is broken, or its window of events out is full."""
        return lane in self._broken or self.index.out.get(lane, 0) >= self.window

    def _behind_held(self, lane: str, head: int) -> bool:
        """`head` is at or behind a follow-up of its lane waiting for its evaluation."""
        return any(lane == held and head >= held_id for held_id, held in self._held.items())

    def offer(self, lane: str) -> None:
        """`lane` may have become claimable: an entry for it in the lane index (caller holds
        the index's lock). Past twice the lanes held (stale entries), the index is rebuilt."""
        head = self._free_head(lane)
        if head is None:
            return
        heads = self._heads
        heapq.heappush(heads, (head, lane))
        if len(heads) > 2 * len(self.index.lanes) + 64:
            fresh = ((self._free_head(name), name) for name in self.index.lanes)
            self._heads = [(h, name) for h, name in fresh if h is not None]
            heapq.heapify(self._heads)

    def rebuild(self) -> None:
        """The lane index from what the index holds (after the spool read it at open)."""
        with self.index.lock:
            self._heads = []
            for lane in self.index.lanes:
                self.offer(lane)

    def _took(self, lane: str) -> None:
        """The calling worker took an event of `lane`, which it holds from now on. When its
        previous one kept it longer than `helper_after` and another lane has an event waiting, a
        second worker is woken for it."""
        now = time.monotonic()
        before: float | None = getattr(self._worker, "took", None)
        self._worker.took = now
        self._busy[lane] = now
        slow = before is not None and now - before > self.helper_after
        if slow and self._claimable() is not None:
            self.changed.notify()

    def _let_go(self, lane: str) -> None:
        self._busy.pop(lane, None)
        self._parked.discard(lane)
        self.offer(lane)

    # -- waiting workers ------------------------------------------------------------------------

    def park(self, lane: str) -> None:
        """The worker holding `lane` waits (for an evaluation, or before retrying its sink): it
        is not coming back soon, so another lane's event wakes another worker (one is woken now
        if such an event waits)."""
        with self.index.lock:
            self._parked.add(lane)
            if self._claimable() is not None:
                self.changed.notify()

    def unpark(self, lane: str) -> None:
        with self.index.lock:
            self._parked.discard(lane)
            if lane in self._busy:
                self._busy[lane] = time.monotonic()

    @contextlib.contextmanager
    def parked(self, lane: str) -> Iterator[None]:
        """`park(lane)` for the time of the `with` block, then `unpark(lane)`."""
        self.park(lane)
        try:
            yield
        finally:
            self.unpark(lane)

    def _engaged(self) -> bool:
        """A worker took its event less than `helper_after` ago and waits for nothing: it will
        be back for more soon."""
        recent = time.monotonic() - self.helper_after
        return any(t >= recent for lane, t in self._busy.items() if lane not in self._parked)

    # -- lanes written through by the receiver (write_through.py) --------------------------------

    def begin_direct(self, lane: str) -> bool:
        """Take `lane` for an event the receiver forwards itself: True when the lane has nothing
        in the spool and no worker; the lane is then nobody else's until `end_direct`. Another
        event of the lane being written through is waited for first (`wait_direct`)."""
        with self.index.lock:
            self._wait_direct(lane)
            if lane in self._busy or lane in self.index.lanes or lane in self._putting:
                return False
            self._direct.add(lane)
            return True

    @contextlib.contextmanager
    def putting(self, lane: str) -> Iterator[None]:
        """An event of `lane` is being put (not committed yet): no event of the lane is written
        through meanwhile, as it would pass that one."""
        with self.index.lock:
            self._putting[lane] = self._putting.get(lane, 0) + 1
        try:
            yield
        finally:
            with self.index.lock:
                left = self._putting[lane] - 1
                if left:
                    self._putting[lane] = left
                else:
                    del self._putting[lane]

    def wait_direct(self, lane: str) -> None:
        """Wait until no event of `lane` is being written through: that event may still end up
        in the spool, and whatever the caller spools must come after it. Not bounded by a
        timeout of its own: the send is (`write_through_timeout` per read and write), and so is
        the put that may follow it."""
        with self.index.lock:
            self._wait_direct(lane)

    def _wait_direct(self, lane: str) -> None:
        while lane in self._direct:
            self.direct_ended.wait()

    def end_direct(self, lane: str) -> None:
        """The receiver is done with `lane` (forwarded, or its event put in the spool)."""
        with self.index.lock:
            self._direct.discard(lane)
            self.direct_ended.notify_all()
            if lane in self.index.lanes:  # its event went to the spool meanwhile
                self.offer(lane)
                self.changed.notify()

    # -- follow-ups held for their evaluation ---------------------------------------------------

    def hold(self, event_id: int, lane: str) -> None:
        """Event `event_id` (a follow-up) and the rest of its lane wait until `unhold` (caller
        holds the index's lock, before any worker can see the event)."""
        self._held[event_id] = lane

    def unhold(self, event_id: int) -> None:
        with self.index.lock:
            lane = self._held.pop(event_id, None)
            if lane is not None:
                self.offer(lane)
            self.changed.notify_all()

    # -- events out: sent without waiting for the sink's answer (producer/outbound.py) ----------

    def sending(self, lane: str, event_id: int) -> bool:
        """The worker holding `lane` sends `event_id` without waiting for the sink's answer:
        True, the event out from now on; False (not to be sent) when it is not the lane's oldest
        event not out, or the lane is broken: the lane was settled meanwhile, `go_on` gives its
        next event."""
        with self.index.lock:
            if self._waits(lane) or self.index.head(lane) != event_id:
                return False
            self.index.out[lane] = self.index.out.get(lane, 0) + 1
            self._flying.setdefault(lane, collections.deque()).append([event_id, None])
            return True

    def reported(
        self, lane: str, event_id: int, taken: bool
    ) -> tuple[list[int], list[int], list[int]]:
        """The sink's answer for `event_id`, out: the lane's answers settled in the order its
        events were sent. Returns the events settled: (taken, out of the lane now: their deletes
        are the caller's; not taken; taken after one that was not: both kept in the lane, sent
        again in order). Once no answer of a broken lane is awaited, it is claimable again from
        its oldest event."""
        settled: list[int] = []
        failed: list[int] = []
        again: list[int] = []
        with self.index.lock:
            flying = self._flying.get(lane)
            if flying is None:
                return settled, failed, again
            for entry in flying:
                if entry[0] == event_id:
                    entry[1] = taken
                    break
            if not taken:
                self._broken[lane] = min(event_id, self._broken.get(lane, event_id))
            broken_at = self._broken.get(lane)
            while flying and flying[0][1] is not None:
                sent, ok = flying.popleft()
                if not ok:
                    failed.append(sent)
                elif broken_at is None or sent < broken_at:
                    settled.append(sent)
                    self.index.remove(sent)  # never handed out again; its delete rides
                else:  # taken after one that was not: sent again after it, in order
                    again.append(sent)
            if not flying:
                del self._flying[lane]
                if broken_at is not None:  # from its oldest event on, in order
                    del self._broken[lane]
                    self.index.out.pop(lane, None)
            if settled or not flying:  # room in its window: its next event for a worker
                self.offer(lane)
                if lane not in self._busy:
                    self.changed.notify()
            if settled:
                self.removed()
        return settled, failed, again

    # -- what commits tell (caller holds the index's lock) --------------------------------------

    def stored(self, lanes: set[str]) -> None:
        """Events of `lanes` were stored: one waiting worker per lane nobody holds, at most
        (waking them all costs a GIL handoff each; a lane a worker holds is gone on with by that
        worker), and none while a worker that will be back within `helper_after` can take them."""
        fresh = {lane for lane in lanes if lane not in self._busy and lane not in self._direct}
        for lane in fresh:
            self.offer(lane)
        if fresh and not self._engaged():
            self.changed.notify(len(fresh))

    def removed(self) -> None:
        """Events left the spool: `wait_empty` learns when it is empty."""
        if not self.index.count:
            self.emptied.notify_all()

    def wake_all(self) -> None:
        self.changed.notify_all()

    # -- the spool as a whole -------------------------------------------------------------------

    def wait_empty(self, deadline: float) -> bool:
        """Wait until (monotonic) `deadline` for the spool to hold no event."""
        with self.index.lock:
            while self.index.count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self.emptied.wait(min(remaining, 0.5))
        return True

    def wake(self) -> None:
        with self.index.lock:
            self.changed.notify_all()

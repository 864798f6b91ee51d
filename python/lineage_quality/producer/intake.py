"""What the receiver hands each accepted event to (`Accept`), and the producer's own one:
`Intake`, forwarded at once when it needs nothing else and the sink is fast (write_through.py),
else stored in the spool. With the lineage kept, a COMPLETE naming datasets that no rule binds
has its lineage kept at once, here: written through when none of its outputs is marked (the
usual case, as cheap as without lineage), spooled for a worker to add the marks otherwise. The
in-driver producer passes another (driver/runtime.py: its own Spark work filtered out first) as
`Producer(accept=...)`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lineage_quality.producer.backoff import status_refuses_for_good
from lineage_quality.producer.envelope import EVALUATED_TYPES, Binder, Envelope
from lineage_quality.producer.metrics import Metrics
from lineage_quality.producer.spool import Spool
from lineage_quality.producer.write_through import WriteThrough

__all__ = ["EVALUATED_TYPES", "Accept", "AcceptMany", "Intake"]

# (body, event): the text as received and its parse by the receiver (None: parse it here)
Accept = Callable[[str, Any], None]
# several (body, event) kept at once, all or none; False: none kept, accept them one by one
AcceptMany = Callable[[list[tuple[str, Any]]], bool]
# a COMPLETE's lineage kept (lineage/keeper.py): True when an output of it is marked
LineageStep = Callable[[Any], bool]


class Intake:
    def __init__(
        self,
        spool: Spool,
        evaluator: Binder,
        write_through: WriteThrough,
        metrics: Metrics,
        count: Callable[[str], None],
        *,
        lineage: LineageStep | None = None,
    ) -> None:
        self.spool = spool
        self.lineage = lineage
        self.evaluator = evaluator
        self.write_through = write_through
        self.metrics = metrics
        self._count = count  # one more "forwarded" or "forward_failures"

    def accept(self, body: str, event: Any) -> None:
        """Keep one event: forwarded at once when it needs nothing else and the sink is fast
        (write_through.py), else stored in the spool. `event` is `body` parsed (by the receiver,
        which validated it), or None to parse it here: either way once, into its envelope."""
        envelope = Envelope.read(body) if event is None else Envelope.of(body, event)
        if envelope.is_event:
            if self.write_through.wanted() and (
                not envelope.kept or (envelope.complete and not envelope.bound(self.evaluator))
            ):
                self._write_through(envelope)
                return
            # after an event of its run being written through, which may end up spooled
            self.spool.wait_direct(envelope.lane or "")
        self._spool(envelope)

    def accept_many(self, items: list[tuple[str, Any]]) -> bool:
        """Keep several events (Kafka in's batch) in the spool in one commit -- one disk sync --,
        in their order, all or none; raises as `accept` does (none kept). False, none kept, when
        the sink is one to write through now: `accept` them one by one then."""
        if self.write_through.wanted():
            return False
        envelopes = [Envelope.read(b) if e is None else Envelope.of(b, e) for b, e in items]
        for envelope in envelopes:
            if envelope.is_event:  # after an event of its run being written through
                self.spool.wait_direct(envelope.lane or "")
        self.spool.keep_many(envelopes)
        self.metrics.events_received.inc(len(envelopes))
        return True

    def relayable(self, envelope: Envelope) -> bool:
        """Needs nothing but forwarding (Kafka in relayed to Kafka out: kafka/relay.py), once
        `lineage_marked` said no mark waits for it: an event that is no COMPLETE nor FAIL, or a
        COMPLETE no rule binds. Its lane's order is the caller's."""
        if not envelope.is_event:
            return False
        if not envelope.kept:
            return True
        return envelope.complete and not envelope.bound(self.evaluator)

    def keeps_lineage(self, envelope: Envelope) -> bool:
        """A COMPLETE whose lineage is kept here (`lineage_marked` before it is relayed)."""
        return self.lineage is not None and envelope.complete and envelope.lists_datasets

    def lineage_marked(self, envelope: Envelope) -> bool:
        """Keep the lineage of a COMPLETE nothing is evaluated on, its lane held (so after
        every earlier event of its run: a write evaluated there is kept before this read of it
        is matched), as a write-through does and before the relay sends it (kafka/relay.py);
        True when it must wait for a worker to add its marks (kept again there: the same rows,
        idempotent)."""
        if self.lineage is None or not self.keeps_lineage(envelope):
            return False
        return self.lineage(envelope.tree)

    def spool_many(
        self, envelopes: list[Envelope], refused: list[int] | None = None, again: int = 0
    ) -> None:
        """Keep `envelopes` in the spool in one commit, in their order, all or none, behind
        whatever their lanes hold (the caller keeps their order: kafka/relay.py), each parsed
        as written first if it was not (`Envelope.exact_form`); raises as `Spool.put` does,
        none kept. `again`: how many of them were counted received already (relayed, then
        spooled to be written again after an earlier event of their run)."""
        self.spool.keep_many([e.exact_form() for e in envelopes], refused or ())
        self.metrics.events_received.inc(len(envelopes) - again)

    def relayed(self, envelope: Envelope) -> None:
        """`envelope` reached the sink without the spool (Kafka out acknowledged it): counted,
        its runs recorded as a write-through's are."""
        self.metrics.events_received.inc()
        self.metrics.events_relayed.inc()
        self._count("forwarded")
        self.spool.forwarded_directly(list(envelope.run_ids))

    def relay_failed(self) -> None:
        """A relayed event was not taken by the sink (kafka/relay.py: spooled)."""
        self._count("forward_failures")

    def _write_through(self, envelope: Envelope) -> None:
        """To the sink before its 201, its lane held; else spooled (write_through.py)."""
        spool = self.spool
        lane = envelope.lane or ""
        if not spool.begin_direct(lane):
            self._spool(envelope)  # behind its run's spooled events: a worker keeps its lineage
            return
        try:
            if self.lineage_marked(envelope):
                self._spool(envelope)  # the lane still held: before its run's next event
                return
            status = self.write_through.send(envelope.text)
            if 200 <= status < 300:
                self.metrics.events_received.inc()
                self.metrics.events_written_through.inc()
                self._count("forwarded")
                spool.forwarded_directly(list(envelope.run_ids))
                return
            self._count("forward_failures")
            # spooled before the lane's next event (still held); a refusal counts to dead letters
            self._spool(envelope, 1 if status_refuses_for_good(status) else 0)
        finally:
            spool.end_direct(lane)

    def _spool(self, envelope: Envelope, refused: int = 0) -> None:
        # durable before the receiver answers 201; the run is recorded in the same transaction
        self.spool.keep(envelope, refused)
        self.metrics.events_received.inc()

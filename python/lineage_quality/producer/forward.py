"""Forwarding, and its retries, in one place.

`Forwarder` sends through openlineage-python transports, configured the usual OpenLineage way:
`openlineage.yml` (or the file named by OPENLINEAGE_CONFIG) or `OPENLINEAGE__TRANSPORT__...`
environment variables; file, console, http (Marquez), kafka, composite... (a plain `http://`
sink over kept-alive connections: http_fast.py; `kafka` acknowledged by the broker:
kafka/transport.py). `Delivery` sends one spooled event until the
sink takes it, dead-letters what a sink refuses for good, and deletes it from the spool after;
a sink that keeps a run's order by itself (Kafka out) is handed a first attempt without waiting
for its answer (outbound.py)."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from openlineage.client import OpenLineageClient
from openlineage.client.serde import Serde
from openlineage.client.transport import Transport, get_default_factory
from openlineage.client.transport.factory import DefaultTransportFactory

from lineage_quality import rawjson
from lineage_quality.errors import ConfigError
from lineage_quality.producer.backoff import refused_for_good
from lineage_quality.producer.http_fast import FastHttp
from lineage_quality.producer.kafka import KafkaAckedTransport
from lineage_quality.producer.outbound import Outbound, pipelined
from lineage_quality.producer.poison import describe, deterministic
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.spool import Spool, SpooledEvent
from lineage_quality.producer.write_through import SinkLatency

log = logging.getLogger(__name__)


def transport_factory() -> DefaultTransportFactory:
    """openlineage-python's transports by `type`, but `kafka`: ours (kafka/transport.py), which
    takes an event only once the broker acknowledged it and keys it by its run. (A `kafka`
    transport inside a `composite` one is still openlineage-python's: docs/producer.md.)"""
    factory = DefaultTransportFactory()
    for kind, made in get_default_factory().transports.items():
        factory.register_transport(kind, made)
    factory.register_transport(KafkaAckedTransport.kind or "kafka", KafkaAckedTransport)
    return factory


def configured_transport() -> Transport:
    """The transport of the usual OpenLineage configuration; refuse none at all, rather than
    openlineage-python's fallback of printing events to the console (events would go nowhere)."""
    client = OpenLineageClient(factory=transport_factory())
    configured = bool((client.config.transport or {}).get("type")) or bool(
        os.environ.get("OPENLINEAGE_URL")
    )
    if not configured and os.environ.get("OPENLINEAGE_DISABLED", "").lower() != "true":
        raise ConfigError(
            "no OpenLineage transport configured to forward events to: pass "
            "--openlineage-config FILE, put an openlineage.yml in the working directory, or set "
            "OPENLINEAGE__TRANSPORT__TYPE (and ..._URL); use type: console to print them"
        )
    return client.transport


class RawEvent(dict[str, Any]):
    """An event for openlineage-python's transports that serializes to exactly `text`.

    Every transport (http, file, console, kafka, composite...) writes an event with
    `Serde.to_json`, which drops nulls and `{}` list items and re-formats numbers; a received
    event must reach the sink as received, with only our facets inserted. The dict holds the
    parsed event for transports that read it (a Kafka message key, a file name), with plain JSON
    values (no rawjson numbers: a custom transport may `json.dumps` it), parsed by `json`'s C
    parser: the one parse left for a transport other than plain http. An integer past Python's
    digit limit becomes a float there (rawjson.loads_plain); the text keeps it as written."""

    def __init__(self, text: str) -> None:
        super().__init__(rawjson.loads_plain(text))
        self.text = text


def _install_raw_serialization() -> None:
    """One targeted hook on openlineage-python's Serde: a RawEvent is written as its text;
    every other object is serialized by openlineage-python as before."""
    if getattr(Serde, "_lineage_quality_raw", False):
        return
    original = Serde.to_json

    def to_json(cls: type[Serde], /, obj: Any, **kwargs: Any) -> str:
        if isinstance(obj, RawEvent):
            return obj.text
        return original(obj, **kwargs)

    setattr(Serde, "to_json", classmethod(to_json))  # noqa: B010
    setattr(Serde, "_lineage_quality_raw", True)  # noqa: B010


class Forwarder:
    def __init__(self, transport: Transport | None = None) -> None:
        self.transport = transport if transport is not None else configured_transport()
        _install_raw_serialization()
        # a plain http:// sink: kept-alive connections instead of requests (see http_fast)
        self.fast = FastHttp.for_transport(self.transport)
        # how fast the sink answers, from every send (write_through.py decides with it); a
        # failed send counts as the transport's whole timeout
        self.latency = SinkLatency(float(getattr(self.transport, "timeout", 5.0) or 5.0))
        log.info(
            "forwarding lineage events through %s%s",
            type(self.transport).__name__,
            " (kept-alive connections)" if self.fast is not None else "",
        )

    def send(self, body: str) -> None:
        """Hand one event (its JSON text) to the sink, byte for byte; raises if the sink did
        not take it."""
        started = time.monotonic()
        try:
            if self.fast is None or not self.fast.send(body):
                self.transport.emit(RawEvent(body))  # type: ignore[arg-type]
        except Exception:
            self.latency.failed()
            raise
        self.latency.took(time.monotonic() - started)

    def interrupt(self) -> None:
        """End the waits of the sends in flight (the producer is stopping): they raise, and their
        events stay in the spool. Only a transport that waits on its own has any (Kafka's
        delivery reports, up to message.timeout.ms)."""
        interrupt = getattr(self.transport, "interrupt", None)
        if callable(interrupt):
            interrupt()

    def close(self) -> None:
        if self.fast is not None:
            self.fast.close()
        self.transport.close()


class Delivery:
    """One event to the sink until the sink takes it, then out of the spool: the producer's
    forwarding with its retries, in one place.

    A failed send is retried after the back-off of `settings.delivery.retry` (its lane parked,
    so other runs' events get a worker), for as long as it takes; a sink that refused the same
    body `settings.delivery.dead_letter_after` times for good (a 4xx other than 408/429, backoff.py)
    never will take it: the event goes to the spool's dead letters, and the run's later events
    go on. A forwarded event is deleted from the spool, retried the same way if that fails
    (until then it is not handed out again by this process; a restart forwards it once more).
    `count(name)` is told of each `forwarded`, `forward_failures`, `dead_letters` and
    `dead_letters_expired` (the oldest dead letters expired past their bound);
    `buried(item)` of each event moved to the dead letters; `stop` ends every wait."""

    def __init__(
        self,
        forwarder: Forwarder,
        spool: Spool,
        settings: Settings,
        stop: threading.Event,
        count: Callable[[str], None],
        buried: Callable[[SpooledEvent], None],
    ) -> None:
        self.forwarder = forwarder
        self.spool = spool
        self.settings = settings
        self._stop = stop
        self._count = count
        self._buried = buried
        sink = pipelined(getattr(forwarder, "transport", None))  # a test's forwarder: none
        self.outbound = (
            None
            if sink is None
            else Outbound(sink, spool, settings.delivery.max_in_flight, count, stop)
        )

    def send(
        self, item: SpooledEvent, body: str, event: Any, run_ids: Sequence[str], step: int
    ) -> None:
        """`forward` then `delete` (`run_ids`, `step`); a first attempt to a sink that keeps a
        run's order by itself is handed over without waiting (outbound.py: deleted once taken;
        `event`, the body's parse or None, gives its key)."""
        outbound = self.outbound
        if outbound is not None and not item.attempts and not item.refused:
            outbound.send(item, body, event, run_ids, step)
            return
        if outbound is not None:  # a retry: refusals when handed over count too
            item = attrs.evolve(item, refused=item.refused + outbound.refusals(item.id))
        if self.forward(item, body):
            self.delete(item, run_ids, step)

    def forward(self, item: SpooledEvent, body: str) -> bool:
        """Send `body` until the sink takes it (True); False when stopping or when the event
        went to the dead letters."""
        delays = self.settings.delivery.retry.delays()
        attempt = item.attempts + item.refused
        refusals = item.refused  # by its write-through attempt, before it was spooled
        limit = self.settings.delivery.dead_letter_after
        if limit and refusals >= limit:
            self.bury(item, f"refused {refusals} time(s) when written through")
            return False
        while True:
            try:
                self.forwarder.send(body)
            except Exception as exc:
                attempt += 1
                self._count("forward_failures")
                self.spool.attempted(item.id)
                if deterministic(exc):  # the transport cannot take this event, ever
                    if self.bury(item, f"cannot be sent: {describe(exc)}"):
                        return False
                elif refused_for_good(exc):
                    refusals += 1
                    if limit and refusals >= limit:
                        self.bury(item, f"refused {refusals} times: {_short(exc)}")
                        return False
                backoff = next(delays)
                log.warning(
                    "forwarding event %d failed (attempt %d): %s; retrying in %.1fs",
                    item.id,
                    attempt,
                    _short(exc),
                    backoff,
                )
                with self.spool.parked(item.lane):
                    if self._stop.wait(backoff):
                        return False
                continue
            self._count("forwarded")
            return True

    def bury(self, item: SpooledEvent, reason: str) -> bool:
        """`item` to the dead letters with `reason`, counted and logged; False when it could
        not be moved (logged: it stays in the spool)."""
        reason = rawjson.storable(reason)  # it may quote the event
        try:
            expired = self.spool.dead_letter(item.id, reason)
        except sqlite3.Error as exc:
            log.error("could not move event %d to the dead letters: %s", item.id, exc)
            return False
        self._count("dead_letters")
        for _ in range(expired):
            self._count("dead_letters_expired")
        self._buried(item)
        gone = f"; {expired} older dead letter(s) expired (--dead-letter-max-*)" if expired else ""
        log.error(
            "event %d moved to the dead letters (`lineage-quality dead-letters list --spool %s`): "
            "%s%s",
            item.id,
            self.spool.path,
            reason,
            gone,
        )
        return True

    def delete(self, item: SpooledEvent, run_ids: Sequence[str] = (), step: int = 0) -> None:
        """Delete the forwarded event, recording its runs (`step`: its run's waiting COMPLETE
        count changes by it) in the same transaction."""
        delays = self.settings.delivery.retry.delays()
        while True:
            try:
                self.spool.done(item.id, run_ids, step)
                return
            except sqlite3.Error as exc:
                # Not forwarded again by this process; a restart before the delete works would.
                log.error("event %d was forwarded but not deleted from the spool: %s", item.id, exc)
                if self._stop.wait(next(delays)):
                    return


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return (text[0][:300] if text else "") or type(exc).__name__

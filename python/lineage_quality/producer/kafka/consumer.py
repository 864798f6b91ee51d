"""`KafkaIntake`: `serve`'s Kafka input. It consumes the topic the OpenLineage listener's Kafka
transport writes to and hands each event to the producer's intake (intake.py: write-through or
spool), as the HTTP receiver does; one thread, in batches: what librdkafka has fetched (up to
`_BATCH` messages) is kept in one spool commit -- one disk sync -- instead of one each.

What it promises (docs/producer.md, "Kafka in"):

- **Committed only when kept.** `enable.auto.commit` is off; a message's offset is committed only
  after `accept` returned for it, i.e. the event is in the spool and a disk sync covers it, or a
  fast sink took it (write-through). A batch is kept all or none (`Intake.accept_many`); when it
  cannot be (a message that is not an event, a full spool, a sink to write through) its messages
  are taken one at a time as below. Offsets are committed every `kafka_commit_every` seconds,
  when partitions are revoked (a rebalance: what is kept is committed before another consumer
  reads on) and at the stop. A crash loses no event; it can only repeat those after the last
  commit.
- **Bounded.** A message the spool refuses (at `spool_max_events`/`_bytes`, or a full disk) is
  held -- one message, in memory -- and every assigned partition is paused until the spool takes
  it; the consumer keeps polling meanwhile (group membership, rebalances), so memory stays bounded
  by librdkafka's own fetch bounds.
- **In partition order.** Messages are handled in the order they come (a batch's in one commit,
  in that order): a partition's (and so a run's: the listener keys a run's events alike) events
  reach the spool in its order, and the spool's lanes keep a run's order from there.
- **Nothing lost silently.** A message that is not an event -- not UTF-8, not JSON, NaN, not
  OpenLineage-shaped, too large: what the HTTP receiver answers 400 or 413 to -- is kept as a
  bounded record (its first bytes, size, SHA-256, where it came from and why: the spool's bad
  messages, beside its dead letters and never expiring one), and its offset is committed: the
  partition never stalls on it.

confluent-kafka (the `kafka` extra) is imported when an intake is made, never by this package.
"""

from __future__ import annotations

import logging
import threading
import time
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from lineage_quality.errors import ConfigError
from lineage_quality.masking import masked
from lineage_quality.producer.envelope import Envelope
from lineage_quality.producer.intake import Accept, AcceptMany
from lineage_quality.producer.kafka.offsets import Offsets
from lineage_quality.producer.kafka.relay import NotKept, Relay, Taken
from lineage_quality.producer.kafka.skeleton import read_facts
from lineage_quality.producer.metrics import Metrics
from lineage_quality.producer.receiver.body import RejectedError, decode, decode_quick
from lineage_quality.producer.secrets import client_secrets
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.spool import Spool, SpoolFullError

if TYPE_CHECKING:
    from confluent_kafka import Consumer, KafkaError, Message, TopicPartition

log = logging.getLogger(__name__)
librdkafka_log = logging.getLogger("lineage_quality.kafka.librdkafka")

_POLL = 0.2  # s: a poll; how soon a stop is seen
_RETRY_FIRST, _RETRY_MAX = 0.2, 5.0  # s: a spool error other than "full", tried again
_BATCH = 500  # messages kept in one spool commit at most (what librdkafka fetched already)
_STOP_BOUND = 15.0  # s the stop waits for the thread (a commit, then close: leaves the group)
# s the stop waits for relayed events' acknowledgements before its commit (within serve's 5 s
# for Kafka in's stop: what is not acknowledged by then is read again after the restart)
_RELAY_FINISH = 2.0
Partition = tuple[str, int]


def wanted(settings: Settings) -> bool:
    """Kafka in is configured: bootstrap servers by flag or in the client settings."""
    return bool(settings.kafka.bootstrap_servers or settings.kafka.config.get("bootstrap.servers"))


def consumer_settings(settings: Settings) -> dict[str, Any]:
    """The librdkafka settings of the consumer: `kafka_config` as given, the flags' bootstrap
    servers (when given) and group id (unless `group.id` is in `kafka_config`), offsets never
    committed by librdkafka itself, a new group starting at the topic's beginning. ConfigError
    for what would commit an offset before its event is kept."""
    conf: dict[str, Any] = dict(settings.kafka.config)
    if settings.kafka.bootstrap_servers:
        conf["bootstrap.servers"] = settings.kafka.bootstrap_servers
    if not conf.get("bootstrap.servers"):
        raise ConfigError("Kafka in: no bootstrap servers (--kafka-bootstrap-servers)")
    conf.setdefault("group.id", settings.kafka.group_id)
    for name in ("enable.auto.commit", "enable.auto.offset.store"):
        if str(conf.get(name, "false")).strip().lower() == "true":
            raise ConfigError(
                f"Kafka in: {name}=true would commit offsets of events not yet kept: leave it "
                "unset (lineage-quality commits an offset once its event is in the spool)"
            )
        conf[name] = False
    conf.setdefault("auto.offset.reset", "earliest")  # a new group: the topic from its start
    return conf


def topics_of(settings: Settings) -> list[str]:
    topics = [t.strip() for t in settings.kafka.topics.split(",") if t.strip()]
    if not topics:
        raise ConfigError("Kafka in: no topic (--kafka-topic)")
    return topics


class KafkaIntake:
    """The Kafka input of one producer: `accept` is its intake's (`Intake.accept`), `spool`
    where bad messages go (its dead letters); `accept_many` its `Intake.accept_many` (None: one
    message at a time); `relay`, when the sink is Kafka out: events that need nothing but
    forwarding go there straight (relay.py), the others to the spool through it."""

    def __init__(
        self,
        settings: Settings,
        accept: Accept,
        spool: Spool,
        metrics: Metrics | None = None,
        accept_many: AcceptMany | None = None,
        relay: Relay | None = None,
    ) -> None:
        self.topics = topics_of(settings)
        self._secrets = client_secrets(settings.kafka.config)
        self.settings = consumer_settings(settings)
        self._accept = accept
        self._accept_many = accept_many
        self._relay = relay
        self._gone: set[Partition] = set()  # revoked while a batch is being taken
        self._spool = spool
        self._metrics = metrics or Metrics()  # serve's: /metrics shows them
        self._max_body = settings.receiver.max_body
        self._commit_every = settings.kafka.commit_every
        self._stop = threading.Event()
        # per assigned partition: the messages fetched and not kept yet (offsets.py; the
        # relay's too), and the offset committed (dropped when the partition is revoked)
        self._offsets = relay.offsets if relay is not None else Offsets()
        self._committed: dict[Partition, int] = {}
        self._held: Partition | None = None  # the partition of the message waiting for room
        self._held_revoked = False
        self._paused = False
        self.taken = 0  # events handed to the intake
        self.dead_lettered = 0  # messages that were not events (kept as bad messages)
        self.pauses = 0  # times consumption paused for a full spool
        self._consumer = self._new_consumer()
        self._thread = threading.Thread(target=self._run, name="kafka-intake", daemon=True)

    # -- life -----------------------------------------------------------------------------------

    def start(self) -> None:
        self._consumer.subscribe(
            self.topics, on_assign=self._assigned, on_revoke=self._revoked, on_lost=self._lost
        )
        self._thread.start()
        log.info(
            "consuming lineage events from Kafka topic(s) %s as group %s",
            ", ".join(self.topics),
            self.settings["group.id"],
        )

    def stop(self, timeout: float = _STOP_BOUND) -> None:
        """Stop consuming: what was kept is committed, the group left (its partitions go to the
        others at once); a message held for room stays uncommitted, read again later. At most
        `timeout` seconds: with the broker gone neither the commit nor the leave can end, and
        the thread is left behind (what it did not commit is read again after a restart)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=timeout)
            if self._thread.is_alive():
                log.warning(
                    "Kafka in: the commit and leave did not end within %.1fs (the broker "
                    "gone?); what was not committed is read again after the restart", timeout,
                )  # fmt: skip
        log.info(
            "Kafka in: %d event(s) taken, %d message(s) dead-lettered, paused %d time(s)",
            self.taken, self.dead_lettered, self.pauses,
        )  # fmt: skip

    def _run(self) -> None:
        consumer = self._consumer
        relay = self._relay
        last_commit = time.monotonic()
        try:
            while not self._stop.is_set():
                self._gone = set()
                wait = _POLL
                if relay is not None:
                    relay.pump()  # acknowledgements: offsets kept, lanes go on
                    wait = relay.poll_timeout(_POLL)
                if relay is not None and relay.full():  # nothing more until reports came
                    relay.wait(_POLL)
                else:
                    message = consumer.poll(wait)
                    if message is not None:
                        # and what else is fetched already: no wait for more
                        batched = self._accept_many or relay
                        more = consumer.consume(_BATCH - 1, 0) if batched else []
                        self._take_all([message, *more])
                if time.monotonic() - last_commit >= self._commit_every:
                    self._commit()
                    last_commit = time.monotonic()
        except Exception:  # never silently: the log says the intake stopped, offsets are safe
            log.exception("the Kafka intake stopped on an unexpected error")
        finally:
            if relay is not None:
                try:  # what was acknowledged is committed below; the rest is read again
                    relay.finish(_RELAY_FINISH)
                except Exception:
                    log.exception("Kafka in: ending the relay failed")
            self._commit()
            try:
                consumer.close()  # leaves the group: a rebalance gives its partitions away now
            except Exception as exc:
                log.warning("%s", self._mask(f"closing the Kafka consumer: {exc}"))

    # -- a batch --------------------------------------------------------------------------------

    def _take_all(self, messages: list[Message]) -> None:
        """Keep `messages` in one commit when they are all events (`_keep_batch`; with a relay,
        through it: `_relay_batch`), else one at a time (`_take`): a stop ends it (the rest is
        not committed: read again), a message of a partition revoked meanwhile (in the `consume`
        that fetched the batch too) is the next owner's: never kept nor committed here."""
        messages = [m for m in messages if (m.topic() or "", m.partition() or 0) not in self._gone]
        events = [m for m in messages if m.error() is None]
        for message in events:  # pending until kept: no commit passes one given up
            self._offsets.fetched((message.topic() or "", message.partition() or 0),
                                  message.offset() or 0)  # fmt: skip
        if self._relay is not None and events:
            rest = {id(m) for m in self._relay_batch(events)}
            # the errors logged, and what the relay did not take one at a time, in order
            messages = [m for m in messages if m.error() is not None or id(m) in rest]
        elif len(events) > 1 and self._keep_batch(events):
            return
        for message in messages:
            if self._stop.is_set():
                return
            error = message.error()
            if error is not None:
                if not _end_of_partition(error):
                    librdkafka_log.warning("%s", self._mask(f"Kafka in: {error.str()}"))
            elif (message.topic() or "", message.partition() or 0) not in self._gone:
                self._take(message)

    def _keep_batch(self, messages: list[Message]) -> bool:
        """Keep `messages`' events in one spool commit, all or none; False (none kept) when one
        is not an event or the intake could not keep them at once: taken one at a time then."""
        if self._accept_many is None:
            return False
        items = []
        for message in messages:
            raw = message.value()
            if raw is None or len(raw) > self._max_body:
                return False
            try:
                items.append(decode(raw, None, self._max_body))
            except RejectedError:
                return False
        try:
            if not self._accept_many(items):
                return False
        except Exception:  # a full spool, a disk error: one at a time pauses or retries
            return False
        for message in messages:
            self._offsets.kept((message.topic() or "", message.partition() or 0),
                               message.offset() or 0)  # fmt: skip
        self.taken += len(messages)
        self._metrics.kafka_messages.labels(outcome="taken").inc(len(messages))
        return True

    def _relay_batch(self, messages: list[Message]) -> list[Message]:
        """Hand `messages`' events to the relay (relay.py: relayed, waiting behind their run's
        event out, or spooled in one commit); bad messages kept aside as `_take` keeps them.
        Returns the messages not taken (the spool refused them): taken one at a time then."""
        relay = self._relay
        assert relay is not None
        items: list[Taken] = []
        by_item: dict[int, Message] = {}
        for message in messages:
            where: Partition = (message.topic() or "", message.partition() or 0)
            offset = message.offset() or 0
            raw = message.value()
            envelope = None
            if raw is not None and len(raw) <= self._max_body:
                envelope = _envelope(raw, self._max_body)
            if envelope is None:  # not an event: a bounded record of it (bad_messages.py)
                try:
                    decoded = self._decode(message, where, offset)
                except _Abandoned:
                    return []  # stopping or revoked: the rest is read again
                if decoded is None:
                    self._offsets.kept(where, offset)
                    continue
                # the quick ways refused what `decode` took (a body at the edge of its depth
                # bound, where each frame counts): taken as `decode` parsed it
                envelope = Envelope.of(*decoded)
            item = Taken(where, offset, envelope, relay.epoch(where))
            by_item[id(item)] = message
            items.append(item)
        try:
            relay.take(items)
        except NotKept as exc:
            rest = {id(item) for item in exc.rest}
            taken = len(items) - len(rest)
            self._count_taken(taken)
            return [by_item[id(item)] for item in items if id(item) in rest]
        self._count_taken(len(items))
        return []

    def _count_taken(self, n: int) -> None:
        if n:
            self.taken += n
            self._metrics.kafka_messages.labels(outcome="taken").inc(n)

    # -- one message ----------------------------------------------------------------------------

    def _take(self, message: Message) -> None:
        """Hand one message's event to the intake, waiting (partitions paused) while the spool
        has no room; a message that is not an event to the dead letters. Its offset is marked
        for the next commit only then."""
        where: Partition = (message.topic() or "", message.partition() or 0)
        offset = message.offset() or 0
        try:
            decoded = self._decode(message, where, offset)
        except _Abandoned:  # stopping or revoked before it could be kept aside: not committed
            return
        if decoded is None:  # dead-lettered: kept, like an event
            self._offsets.kept(where, offset)
            return
        text, event = decoded
        self._held, self._held_revoked = where, False
        delay = _RETRY_FIRST
        try:
            while True:
                try:
                    self._keep_one(where, offset, text, event)
                except SpoolFullError as exc:
                    if not self._paused:
                        self._pause(str(exc))
                    wait = _POLL
                except Exception as exc:  # the spool could not keep it (sqlite3.Error...)
                    log.warning("Kafka in: the spool did not keep an event (%s); again in "
                                "%.1fs", exc, delay)  # fmt: skip
                    wait, delay = delay, min(delay * 2, _RETRY_MAX)
                else:
                    self._count_taken(1)
                    return
                if not self._serve_group(wait):
                    return  # stopping, or the partition went to another consumer: not kept
        finally:
            self._held = None
            if self._paused:
                self._resume()

    def _keep_one(self, where: Partition, offset: int, text: str, event: Any) -> None:
        """Hand one event to the relay (relay.py) or the intake, its offset marked kept when it
        is (the relay marks its own); raises what refused it."""
        relay = self._relay
        if relay is None:
            self._accept(text, event)
            self._offsets.kept(where, offset)
            return
        try:
            relay.take([Taken(where, offset, Envelope.of(text, event), relay.epoch(where))])
        except NotKept as exc:
            raise (exc.__cause__ or exc) from None

    def _decode(self, message: Message, where: Partition, offset: int) -> tuple[str, Any] | None:
        """The event's text and parse, checked as the HTTP receiver checks a body (body.py);
        None when it is not an event, once its record is kept (the spool's bad messages)."""
        raw = message.value()
        try:
            if raw is None:
                raise RejectedError(HTTPStatus.BAD_REQUEST, "an empty message (no value)")
            if len(raw) > self._max_body:
                raise RejectedError(
                    HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                    f"{len(raw)} bytes, over --max-body-bytes {self._max_body}",
                )
            return decode(raw, None, self._max_body)
        except RejectedError as exc:
            reason = f"Kafka message {where[0]}[{where[1]}]@{offset} is not an event: {exc}"
            while True:
                try:  # a record of it, bounded: never the message whole (bad_messages.py)
                    expired = self._spool.keep_bad_message(
                        raw, f"kafka:{where[0]}/{where[1]}", offset, reason
                    )
                    break
                except Exception as error:  # a full disk: the partition waits, nothing lost
                    log.warning("Kafka in: could not keep a bad message aside (%s)", error)
                    if not self._serve_group(_RETRY_MAX):
                        raise _Abandoned() from None
            self.dead_lettered += 1
            self._metrics.kafka_messages.labels(outcome="dead_lettered").inc()
            log.warning("%s; kept as a bad message (`lineage-quality dead-letters`)", reason)
            if expired:
                self._metrics.kafka_bad_messages_expired.inc(expired)
                log.warning(
                    "%d record(s) of bad messages expired, the oldest (--kafka-bad-messages-max)",
                    expired,
                )
            return None

    # -- pausing --------------------------------------------------------------------------------

    def _pause(self, why: str) -> None:
        self._paused = True
        self.pauses += 1
        self._metrics.kafka_paused.set(1)
        self._pause_assigned()
        log.warning("Kafka in: paused consumption: %s", why)

    def _pause_assigned(self) -> None:
        try:
            assigned = self._consumer.assignment()
            if assigned:
                self._consumer.pause(assigned)
        except Exception as exc:
            log.warning("%s", self._mask(f"Kafka in: pausing: {exc}"))

    def _resume(self) -> None:
        self._paused = False
        self._metrics.kafka_paused.set(0)
        try:
            assigned = self._consumer.assignment()
            if assigned:
                self._consumer.resume(assigned)
        except Exception as exc:
            log.warning("%s", self._mask(f"Kafka in: resuming: {exc}"))
        log.info("Kafka in: resumed consumption")

    def _serve_group(self, seconds: float) -> bool:
        """Poll for `seconds` without taking messages (group membership, rebalances); False
        when stopping or the held message's partition was revoked. A message fetched before the
        pause (or from a partition assigned meanwhile) is read again later: seek back to it."""
        from confluent_kafka import TopicPartition

        deadline = time.monotonic() + seconds
        while True:
            if self._stop.is_set() or self._held_revoked:
                return False
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            if self._relay is not None:
                self._relay.pump()  # the relayed events' reports go on being settled
            message = self._consumer.poll(min(_POLL, left))
            if self._paused:
                self._pause_assigned()  # partitions assigned meanwhile too
            if message is not None and message.error() is None:
                back = TopicPartition(
                    message.topic() or "", message.partition() or 0, message.offset() or 0
                )
                try:
                    self._consumer.seek(back)
                except Exception as exc:  # not committed: read again after a restart anyway
                    log.warning("%s", self._mask(f"Kafka in: seeking back: {exc}"))

    # -- offsets --------------------------------------------------------------------------------

    def _commit(self, only: set[Partition] | None = None) -> None:
        """Commit the offsets of the events kept since the last commit (synchronously)."""
        from confluent_kafka import KafkaException, TopicPartition

        due = {
            where: offset
            for where, offset in self._offsets.all_committable().items()
            if (only is None or where in only) and self._committed.get(where) != offset
        }
        if not due:
            return
        try:
            answer = self._consumer.commit(
                offsets=[TopicPartition(t, p, o) for (t, p), o in due.items()],
                asynchronous=False,
            )
        except KafkaException as exc:  # no coordinator, a rebalance: committed next time
            log.warning("%s", self._mask(f"Kafka in: commit failed, tried again: {exc}"))
            return
        for part in answer or []:
            if part.error is None:
                self._committed[(part.topic, part.partition)] = due[(part.topic, part.partition)]

    def _assigned(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        log.info("Kafka in: assigned %s", _names(partitions))

    def _revoked(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """A rebalance takes `partitions` away: commit what was kept of them first, so the
        next owner starts after it; a message held for room is the next owner's now."""
        gone = {(p.topic, p.partition) for p in partitions}
        if self._relay is not None:
            self._relay.pump()  # what was acknowledged by now is committed too
        self._commit(only=gone)
        self._forget(gone)
        log.info("Kafka in: revoked %s", _names(partitions))

    def _lost(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """Partitions lost without a rebalance (session timed out): another consumer may own
        them already, so nothing is committed; their kept events may be read again there."""
        self._forget({(p.topic, p.partition) for p in partitions})
        log.warning("Kafka in: lost %s", _names(partitions))

    def _forget(self, gone: set[Partition]) -> None:
        self._gone |= gone
        self._offsets.forget(gone)
        if self._relay is not None:
            self._relay.forget(gone)
        for where in gone:
            self._committed.pop(where, None)
        if self._held in gone:
            self._held_revoked = True

    # -- the client -----------------------------------------------------------------------------

    def _mask(self, text: str) -> str:
        return masked(text, self._secrets)

    def _new_consumer(self) -> Consumer:
        try:
            from confluent_kafka import Consumer
        except ImportError as exc:
            raise ConfigError(
                "Kafka in needs confluent-kafka: pip install 'lineage-quality[kafka]'"
            ) from exc

        def error_cb(error: KafkaError) -> None:  # the client's own: all brokers down, auth...
            librdkafka_log.warning("%s", self._mask(f"Kafka in: {error.name()}: {error.str()}"))

        try:
            return Consumer({**self.settings, "logger": librdkafka_log, "error_cb": error_cb})
        except Exception as exc:  # KafkaException: an unknown or invalid setting
            raise ConfigError(self._mask(f"Kafka in: {exc}")) from None


def _envelope(raw: bytes, limit: int) -> Envelope | None:
    """The envelope of a message to relay: its facts read by the skeleton (kafka/skeleton.py),
    else the event parsed quickly (parsed again as written only if it goes to the spool:
    intake.py); None when it is not an event."""
    read = read_facts(raw)
    if read is not None:
        return Envelope.of_facts(*read)
    try:
        return Envelope.of(*decode_quick(raw, limit))
    except RejectedError:
        return None


class _Abandoned(Exception):
    """Stopping (or the partition revoked) while a bad message could not be kept aside."""


def _end_of_partition(error: KafkaError) -> bool:
    from confluent_kafka import KafkaError

    return bool(error.code() == KafkaError._PARTITION_EOF)


def _names(partitions: list[TopicPartition]) -> str:
    return ", ".join(f"{p.topic}[{p.partition}]" for p in partitions) or "nothing"

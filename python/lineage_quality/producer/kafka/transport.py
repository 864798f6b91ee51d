"""`KafkaAckedTransport`: lineage events to a Kafka topic, each one taken only when the broker
acknowledged it, so that forward.py's `Delivery` deletes it from the spool only then.

openlineage-python's `KafkaTransport` (type `kafka`) hands a failed delivery to a callback that
only logs it and returns normally, and keys a dict-shaped event with nothing: with it an event
the broker never took left the spool as forwarded, and a run's events were spread over
partitions (issue 43). This transport reads the same configuration (openlineage-python's
`KafkaConfig`: `topic`, `config` -- librdkafka settings --, `messageKey`) and replaces it for
`type: kafka` (forward.py's `transport_factory`). For each event it:

- keys the message as OpenLineage's Kafka transports do (keys.py: the run's top job), unless
  `messageKey` names one key for every event (as in OpenLineage);
- produces it and waits for its delivery report, at most `message.timeout.ms` (librdkafka's
  bound for a message, retries included; 30 s unless configured) plus `_MARGIN`;
- returns when the broker acknowledged it (`acks=all` unless configured; `acks=0`, which asks
  for no acknowledgement, is refused at start); raises `KafkaNotDelivered` when the report is a
  failure or does not come (broker down, timed out: retried with the back-off), and
  `KafkaRefused` (a `backoff.RefusedForGood`) when the broker refused the message itself (too
  large for the topic, invalid, not authorized: dead-lettered after `--dead-letter-after`). The
  broker refuses a batch whole, so only a message sent alone (`emit`: each in a batch of its
  own) is refused for good; one refused in a batch is retried alone first.

`emit` is the path of a retry (and of any caller that waits). A run's first attempts go through
`produce` instead (producer/outbound.py): handed to librdkafka without waiting, the outcome told
to a callback on the reports thread, so the broker's acknowledgements of many events overlap.
librdkafka keeps a partition's messages in the order they were produced, retries included, with
`enable.idempotence` (set here unless the settings name it or ask for acks other than all; with
it off, `pipelined` is False and every event waits for its report). A retried event may be
written twice (at least once). Kafka in's relay hands several events of a run over at once:
it gets a producer of its own (`gapless`) with `enable.gapless.guarantee`, so that a message the
broker will not take fails the ones behind it instead of leaving a gap. librdkafka's own log
lines and errors go through Python logging, where `serve` masks secrets; the SASL/SSL secrets of
`config` are masked in every error raised here.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from openlineage.client.serde import Serde
from openlineage.client.transport.kafka import KafkaConfig
from openlineage.client.transport.transport import Transport

from lineage_quality.errors import ConfigError
from lineage_quality.masking import masked
from lineage_quality.producer.backoff import RefusedForGood
from lineage_quality.producer.kafka.keys import key_bytes, message_key
from lineage_quality.producer.secrets import client_secrets

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Message, Producer

log = logging.getLogger(__name__)
librdkafka_log = logging.getLogger("lineage_quality.kafka.librdkafka")


class _KnownWarning(logging.Filter):
    """librdkafka warns at every start that `enable.gapless.guarantee` (set here for the relay's
    producer, on purpose) is experimental: a warning no one can act on, so left out."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "enable.gapless.guarantee is experimental" not in record.getMessage()


librdkafka_log.addFilter(_KnownWarning())

DEFAULT_MESSAGE_TIMEOUT_MS = 30_000  # librdkafka's own is 300 s: a lane would wait that long
_MARGIN = 5.0  # s past message.timeout.ms before a missing report counts as a failure
_CLOSE_BOUND = 10.0  # s close() waits for reports when not told how long
_POLL = 0.1  # s: the reports thread's poll, and how soon a waiting emit sees close()
# The producers, by what they send (each made when first used, with these settings over the
# transport's): a run's first attempt, batched as librdkafka batches (`produce`); a retry, each
# message a batch of its own so that a refusal is its own (`emit`: the broker refuses a batch
# whole, so one oversized message in it made the others look refused for good); Kafka in's relay,
# several events of a run at once, that leaves no gap (`gapless`).
_BATCHED, _ALONE, _GAPLESS = "batched", "alone", "gapless"
PRODUCER_ROLES: dict[str, dict[str, str]] = {
    _BATCHED: {},
    _ALONE: {"batch.num.messages": "1"},
    _GAPLESS: {"enable.gapless.guarantee": "true"},
}

# Broker answers that refuse the message itself: the same message will be refused again.
_REFUSED = (
    "MSG_SIZE_TOO_LARGE",  # larger than the topic's max.message.bytes (or message.max.bytes)
    "RECORD_LIST_TOO_LARGE",
    "INVALID_MSG_SIZE",
    "INVALID_RECORD",
    "INVALID_TIMESTAMP",
    "TOPIC_EXCEPTION",  # an invalid topic name
    "POLICY_VIOLATION",
    "UNSUPPORTED_FOR_MESSAGE_FORMAT",
    "TOPIC_AUTHORIZATION_FAILED",  # as an HTTP 403
)


class KafkaNotDelivered(Exception):
    """The broker did not acknowledge the event (no answer, a failure report, a full local
    queue): retried with the back-off, for as long as it takes."""


class KafkaRefused(KafkaNotDelivered, RefusedForGood):
    """The broker refused the event itself: it would refuse it again."""


class _Report:
    """The delivery report of one message, set by librdkafka's callback."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.error: KafkaError | None = None
        self.partition: int | None = None

    def __call__(self, error: KafkaError | None, message: Message) -> None:
        self.error = error
        self.partition = message.partition()
        self.done.set()


class KafkaAckedTransport(Transport):
    kind = "kafka"
    config_class = KafkaConfig

    def __init__(self, config: KafkaConfig) -> None:
        self.kafka_config = config  # the name openlineage-python's transport uses (secrets.py)
        self.topic = config.topic
        self.message_key = config.messageKey
        self._secrets = client_secrets(config.config)
        self.settings = producer_settings(config.config)
        # how long an emit waits for its report: librdkafka reports every message by then
        self.timeout = float(self.settings["message.timeout.ms"]) / 1000 + _MARGIN
        # a run's events may be handed over without waiting for each one's report (`produce`):
        # only when librdkafka keeps their order through its retries
        self.pipelined = _true(self.settings.get("enable.idempotence"))
        self._closed = threading.Event()
        self._interrupted = threading.Event()
        self._lock = threading.Lock()
        # the producers by role (`PRODUCER_ROLES`): the batched one now, the others when first used
        self._producers: dict[str, Producer] = {_BATCHED: self._new(_BATCHED)}
        # after a fatal error: (role, producer, since), polled until every report came; the
        # role's new producer takes nothing meanwhile (`_replacing`), so that no later event of
        # a run is written before an earlier one's failure is known
        self._retired: list[tuple[str, Producer, float]] = []
        self._replacing: set[str] = set()
        self._reports = [self._serve(_BATCHED)]

    def emit(self, event: Any) -> None:
        """Write `event` to the topic; return once the broker acknowledged it, raise if not.
        Through the producer that sends each message alone: a retry's refusal is its own."""
        text = Serde.to_json(event)  # a forwarded RawEvent: the text as received, enriched
        parsed = event if isinstance(event, (dict, Mapping)) else json.loads(text)
        key = self.message_key or message_key(parsed)
        report = _Report()
        used = self._produce(text, key, report, _ALONE)
        deadline = time.monotonic() + self.timeout
        while not report.done.wait(_POLL):
            if self._closed.is_set() or self._interrupted.is_set():
                raise KafkaNotDelivered("the Kafka transport stopped before the broker answered")
            if time.monotonic() > deadline:
                raise KafkaNotDelivered(
                    f"no delivery report from Kafka within {self.timeout:.0f}s "
                    f"(message.timeout.ms + {_MARGIN:.0f}s); key {key!r}"
                )
        if report.error is not None:
            if _fatal(report.error):  # e.g. idempotence lost: this producer can send no more
                self._renew(used)
            raise self._failure(report.error, key, alone=True)

    def produce(
        self,
        text: str,
        event: Any,
        told: Callable[[KafkaNotDelivered | None], None],
        role: str = _BATCHED,
    ) -> None:
        """Hand the event `text` (`event`: its parse, None to parse it here for its key) to
        librdkafka without waiting: `told(None)` once the broker acknowledged it, `told(error)`
        when it did not (on the reports thread). Raises KafkaNotDelivered when it could not even
        be queued (`told` is then never called). `role`: the producer (`PRODUCER_ROLES`). A refusal
        here is never for good (KafkaNotDelivered): librdkafka sends messages in batches, and
        the broker refuses a batch whole, so the retry (`emit`) sends it alone first."""
        parsed = event if isinstance(event, (dict, Mapping)) else json.loads(text)
        self.produce_keyed(text, message_key(parsed), told, role)

    def produce_keyed(
        self,
        text: str,
        key: str | None,
        told: Callable[[KafkaNotDelivered | None], None],
        role: str = _BATCHED,
    ) -> None:
        """`produce`, the event's key (keys.py `message_key`) given: the fixed key of the settings
        goes first, as there."""
        key = self.message_key or key
        used: list[Producer] = []

        def report(error: KafkaError | None, _: Message) -> None:
            if error is None:
                told(None)
                return
            if _fatal(error) and used:
                self._renew(used[0])
            told(self._failure(error, key, alone=False))

        used.append(self._produce(text, key, report, role))

    def gapless(self) -> Gapless:
        """Kafka out for several events of one run at once (kafka/relay.py): a producer of its
        own with `enable.gapless.guarantee`, so that a message it could not write fails every
        message behind it (a fatal error: a new producer takes the next ones) instead of
        leaving a gap the next ones close over. The workers' events keep the other producers:
        one of a run at a time, a refusal there stops nothing else."""
        self._producer_for(_GAPLESS)
        return Gapless(self)

    def _produce(
        self, text: str, key: str | None, report: Callable[..., None], role: str
    ) -> Producer:
        """Queue one message in librdkafka; the producer it went to."""
        if self._closed.is_set() or self._interrupted.is_set():
            raise KafkaNotDelivered("the Kafka transport is stopping or closed")
        producer = self._producer_for(role)
        try:
            producer.produce(
                self.topic, value=text.encode("utf-8"), key=key_bytes(key), on_delivery=report
            )
        except BufferError:
            raise KafkaNotDelivered(
                "librdkafka's queue is full (queue.buffering.max.messages/kbytes): the broker "
                "has not taken the messages before it"
            ) from None
        except Exception as exc:  # confluent_kafka.KafkaException: refused before sending
            error = exc.args[0] if exc.args else exc
            if _fatal(error):  # this producer can send no more
                self._renew(producer)
            raise self._failure(error, key, alone=True) from None
        return producer

    def interrupt(self) -> None:
        """Stopping: the emits waiting for a report raise now (their events stay in the spool;
        a message librdkafka still delivers is sent again after the restart), new ones too."""
        self._interrupted.set()

    def close(self, timeout: float = -1) -> bool:
        """Wait for the reports of what is in flight (at most `timeout` s, 10 when negative),
        then stop; an event not acknowledged by then is still in the spool."""
        if self._closed.is_set():
            return True
        deadline = time.monotonic() + (timeout if timeout >= 0 else _CLOSE_BOUND)
        left = 0
        try:
            producers = list(self._producers.values()) + [p for _, p, _ in self._retired]
            for producer in producers:
                try:
                    left += producer.flush(max(0.0, deadline - time.monotonic()))
                except Exception as exc:  # a fatal error not served yet: its messages failed
                    log.warning("%s", masked(f"closing a Kafka producer: {exc}", self._secrets))
        finally:
            self._closed.set()
            for thread in self._reports:
                thread.join(timeout=1)
        if left:
            log.warning("%d Kafka message(s) not acknowledged at close: sent again later", left)
        return not left

    def _producer_for(self, role: str) -> Producer:
        if role in self._replacing:
            raise KafkaNotDelivered(
                f"the Kafka producer ({role}) is being replaced after a fatal error: its "
                "messages' failures are being reported"
            )
        producer = self._producers.get(role)
        if producer is not None:
            return producer
        with self._lock:
            if role not in self._producers:
                self._producers[role] = self._new(role)
                self._reports.append(self._serve(role))
            return self._producers[role]

    def _new(self, role: str) -> Producer:
        return _new_producer({**self.settings, **PRODUCER_ROLES[role]}, self._secrets)

    def _renew(self, failed: Producer) -> None:
        """A new producer for the next events, after a fatal error of `failed` (once: its other
        messages fail too; their reports are still served, `_serve`)."""
        with self._lock:
            role = next((r for r, p in self._producers.items() if p is failed), None)
            if role is None:
                return
            log.error("the Kafka producer (%s) hit a fatal error: starting a new one", role)
            self._replacing.add(role)
            self._producers[role] = self._new(role)
            self._retired.append((role, failed, time.monotonic()))  # its messages fail: reports

    def _serve(self, role: str) -> threading.Thread:
        """A thread serving `role`'s producer's callbacks (delivery reports, logs, errors) until
        closed; the batched one's also serves the retired producers."""
        thread = threading.Thread(
            target=self._serve_reports, args=(role,), name=f"kafka-reports-{role}", daemon=True
        )
        thread.start()
        return thread

    def _serve_reports(self, role: str) -> None:
        while not self._closed.is_set():
            retired = [entry for entry in list(self._retired) if entry[0] == role]
            self._poll(self._producers[role], 0 if retired else _POLL)
            for entry in retired:
                _, old, since = entry
                self._poll(old, _POLL / len(retired))
                if not len(old) or time.monotonic() - since > self.timeout:
                    self._retired.remove(entry)
                    if not any(r == role for r, _, _ in self._retired):
                        self._replacing.discard(role)  # every failure reported: go on

    def _poll(self, producer: Producer, timeout: float) -> None:
        try:
            producer.poll(timeout)
        except Exception as exc:  # a callback's, or the producer's fatal error
            if _fatal(exc.args[0] if exc.args else None):  # e.g. the gapless guarantee's
                self._renew(producer)  # only if it is a role's current one
            else:
                log.exception("serving Kafka delivery reports failed")

    def _failure(self, error: Any, key: str | None, alone: bool) -> KafkaNotDelivered:
        """The exception for a failed delivery: `KafkaRefused` when the broker refused the
        message itself (`_REFUSED`, sent `alone`), `KafkaNotDelivered` otherwise; secrets
        masked."""
        name = error.name() if hasattr(error, "name") else type(error).__name__
        said = error.str() if hasattr(error, "str") else str(error)
        text = masked(
            f"Kafka did not take the event (topic {self.topic}, key {key!r}): {name}: {said}",
            self._secrets,
        )
        if name not in _REFUSED:
            return KafkaNotDelivered(text)
        if not alone:  # maybe another message's: its batch refused whole
            return KafkaNotDelivered(f"{text} (in a batch: sent alone before it counts)")
        return KafkaRefused(text)


class Gapless:
    """The transport's relay producer as the relay's sink (kafka/relay.py `RelaySink`)."""

    def __init__(self, transport: KafkaAckedTransport) -> None:
        self._transport = transport

    def produce(
        self, text: str, key: str | None, told: Callable[[KafkaNotDelivered | None], None]
    ) -> None:
        self._transport.produce_keyed(text, key, told, _GAPLESS)


def producer_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """The librdkafka settings of the producer: `config` as given, `message.timeout.ms` 30 s
    unless set; refused (ConfigError) when they would acknowledge what the broker did not take
    or never answer."""
    settings = dict(config)
    for name in ("acks", "request.required.acks"):
        if str(settings.get(name, "all")).strip() == "0":
            raise ConfigError(
                f"kafka transport: {name}=0 asks the broker for no acknowledgement, so an event "
                "could leave the spool without being written: use acks=all (the default) or 1"
            )
    if str(settings.get("delivery.report.only.error", "false")).lower() == "true":
        raise ConfigError(
            "kafka transport: delivery.report.only.error=true hides the acknowledgements an "
            "event waits for: leave it unset"
        )
    acks = str(settings.get("acks", settings.get("request.required.acks", "all"))).strip()
    if acks in ("all", "-1"):  # idempotence needs acks=all: never changes what was asked
        settings.setdefault("enable.idempotence", "true")
    for alias in ("delivery.timeout.ms", "message.timeout.ms"):
        if alias in settings:
            settings["message.timeout.ms"] = settings.pop(alias)
    timeout = settings.setdefault("message.timeout.ms", DEFAULT_MESSAGE_TIMEOUT_MS)
    try:
        bounded = int(timeout) > 0
    except (TypeError, ValueError):
        bounded = False
    if not bounded:
        raise ConfigError(
            f"kafka transport: message.timeout.ms must be a positive number of milliseconds, "
            f"not {timeout!r} (0 would wait for ever: a run's events could not go on)"
        )
    return settings


def _fatal(error: Any) -> bool:
    """A librdkafka error that leaves its producer unable to send: flagged fatal (an error
    raised by `poll`), or `_FATAL` (a delivery report's, a `produce`'s)."""
    if error is None:
        return False
    try:
        from confluent_kafka import KafkaError

        return bool(error.fatal()) or error.code() == KafkaError._FATAL
    except Exception:  # not a KafkaError
        return False


def _true(value: Any) -> bool:
    return str(value).strip().lower() in ("true", "1")


def _new_producer(settings: Mapping[str, Any], secrets: list[str]) -> Producer:
    """A librdkafka producer logging through Python logging (masked there by `serve`)."""
    try:
        from confluent_kafka import Producer
    except ImportError as exc:
        raise ConfigError(
            "the kafka transport needs confluent-kafka: pip install 'lineage-quality[kafka]'"
        ) from exc

    def error_cb(error: KafkaError) -> None:  # the client's own: all brokers down, auth...
        said = f"Kafka client: {error.name()}: {error.str()}"
        librdkafka_log.warning("%s", masked(said, secrets))

    try:
        return Producer({**settings, "logger": librdkafka_log, "error_cb": error_cb})
    except Exception as exc:  # KafkaException: an unknown or invalid setting
        raise ConfigError(masked(f"kafka transport: {exc}", secrets)) from None

"""Test support for Kafka in (nothing here ships in the runtime package): write messages to a
topic as the listener's Kafka transport does (keyed by the run), read a group's committed
offsets, and the arguments of a `serve` consuming a topic."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kafka_broker import CLIENT_LOG, KafkaBroker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
from faultkit import RecordingSink, ServeProcess, openlineage_yml

from lineage_quality.producer.kafka import message_key


def produce(
    broker: KafkaBroker, topic: str, messages: Iterable[dict[str, Any] | bytes | None]
) -> int:
    """Write each message (an event, keyed by its run as OpenLineage keys it; raw bytes, or None
    for a message with no value: no key) in order, every one acknowledged; how many."""
    from confluent_kafka import Producer

    # idempotent: librdkafka's default (retries with up to a million requests in flight) may
    # write a retried batch after the ones behind it -- a run's event 0 after its event 9 on a
    # topic just created, whose first requests fail until its leader is known -- and the tests'
    # run-order checks take the topic's order as the order sent
    producer = Producer({
        "bootstrap.servers": broker.bootstrap, "acks": "all", "enable.idempotence": True,
        "logger": CLIENT_LOG,
    })  # fmt: skip
    failed: list[Any] = []
    count = 0
    for message in messages:
        if message is None or isinstance(message, bytes):
            value, key = message, None
        else:
            value, key = json.dumps(message).encode(), message_key(message).encode()
        producer.produce(
            topic, value=value, key=key, on_delivery=lambda e, m: e and failed.append(e)
        )
        producer.poll(0)
        count += 1
    assert producer.flush(30) == 0 and not failed, failed
    return count


def committed(broker: KafkaBroker, group: str, topic: str, partitions: int) -> dict[int, int]:
    """The group's committed offset of each partition (0 where none)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": group, "logger": CLIENT_LOG}
    )
    try:
        found = consumer.committed(
            [TopicPartition(topic, p) for p in range(partitions)], timeout=20
        )
    finally:
        consumer.close()
    return {tp.partition: max(tp.offset, 0) for tp in found}


def end_offsets(broker: KafkaBroker, topic: str, partitions: int) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "offsets", "logger": CLIENT_LOG}
    )
    try:
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=20)[1]
            for p in range(partitions)
        }
    finally:
        consumer.close()


def wait_until(predicate: Any, timeout: float, step: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())


# the group's session as the tests keep it (the broker's group.min.session.timeout.ms is 6 s)
SHORT_SESSION = [
    "--kafka-conf", "session.timeout.ms=6000", "--kafka-conf", "heartbeat.interval.ms=1000",
]  # fmt: skip


def kafka_serve(
    broker: KafkaBroker,
    topic: str,
    group: str,
    folder: Path,
    sink: RecordingSink,
    contracts: Path,
    extra: list[str] = (),  # type: ignore[assignment]
    name: str = "serve",
) -> ServeProcess:
    """`serve` consuming `topic` as `group`, forwarding to `sink`, its spool and log in
    `folder` (named `name`)."""
    folder.mkdir(parents=True, exist_ok=True)
    config = openlineage_yml(folder / f"{name}.openlineage.yml", sink)
    if not any("session.timeout.ms" in arg for arg in extra):
        # a restart after a kill -9 rejoins the group once the killed member's session ends:
        # librdkafka's 45 s would outlast the tests' waits under load
        extra = [*extra, *SHORT_SESSION]
    return ServeProcess(
        [
            "--contracts", str(contracts),
            "--port", "0",
            "--spool", str(folder / f"{name}.spool.db"),
            "--openlineage-config", str(config),
            "--kafka-bootstrap-servers", broker.bootstrap,
            "--kafka-topic", topic,
            "--kafka-group-id", group,
            *extra,
        ],
        folder / f"{name}.log",
    )  # fmt: skip


def in_out_serve(
    broker: KafkaBroker,
    folder: Path,
    topics: tuple[str, str],
    group: str,
    linger_ms: int,
    extra: list[str] = (),  # type: ignore[assignment]
    client: dict[str, str] | None = None,
) -> ServeProcess:
    """`serve` from topic `topics[0]` to Kafka out's topic `topics[1]` (librdkafka holding each
    message `linger_ms` before it goes to the broker; `client`: more librdkafka settings of Kafka
    out), as `group`, its spool `folder/s.db`."""
    topic_in, topic_out = topics
    config = folder / f"out-{linger_ms}.openlineage.yml"
    more = "".join(f"    {name}: '{value}'\n" for name, value in (client or {}).items())
    config.write_text(
        f"transport:\n  type: kafka\n  topic: {topic_out}\n  config:\n"
        f"    bootstrap.servers: '{broker.bootstrap}'\n"
        f"    linger.ms: '{linger_ms}'\n{more}"
    )
    return ServeProcess(
        [
            "--contracts", str(folder / "contracts"), "--port", "0",
            "--spool", str(folder / "s.db"), "--openlineage-config", str(config),
            "--kafka-bootstrap-servers", broker.bootstrap,
            "--kafka-topic", topic_in, "--kafka-group-id", group, *SHORT_SESSION, *extra,
        ],
        folder / f"serve-{linger_ms}.log",
    )  # fmt: skip

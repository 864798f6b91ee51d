"""The Kafka suite: a real Apache Kafka broker (KRaft, one node; kafka_broker.py) for the whole
session, started once and stopped at its end. A broker that cannot be started FAILS the tests that
need it, never skips them (the policy of tests/e2e's Marquez fixture)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka_broker import BrokerStartError, KafkaBroker


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """A running broker: `.bootstrap` (`127.0.0.1:PORT`), `.create_topic`, `.read`, and
    `.stop()` / `.start()` for an outage (a test that stops it starts it again)."""
    try:
        broker = KafkaBroker(Path(tmp_path_factory.mktemp("kafka")))
        broker.start()
    except BrokerStartError as exc:
        pytest.fail(f"no Kafka broker for the Kafka tests: {exc}")
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def running_broker(kafka_broker: KafkaBroker) -> KafkaBroker:
    """The session's broker, started again if an earlier test left it stopped."""
    if not kafka_broker.running:
        kafka_broker.process = None
        kafka_broker.start()
    return kafka_broker

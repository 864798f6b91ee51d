"""The Kafka suite: a real Apache Kafka broker (KRaft, one node; kafka_broker.py), started once
for the suite and stopped after its last test, so that its JVM does not idle through the rest of
`make test`. A broker that cannot be started FAILS the tests that need it, never skips them (the
policy of tests/e2e's Marquez fixture)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka_broker import BrokerStartError, KafkaBroker

HERE = Path(__file__).resolve().parent
_started: list[KafkaBroker] = []


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """The broker: `.bootstrap` (`127.0.0.1:PORT`), `.create_topic`, `.read`, and `.stop()` /
    `.start()` for an outage. Use `running_broker`, which starts it (again) when needed."""
    try:
        broker = KafkaBroker(Path(tmp_path_factory.mktemp("kafka")))
    except BrokerStartError as exc:
        pytest.fail(f"no Kafka broker for the Kafka tests: {exc}")
    _started.append(broker)
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def running_broker(kafka_broker: KafkaBroker) -> Iterator[KafkaBroker]:
    """The broker, running: started if it is not (first use, after the suite's end, or left
    stopped by a test's outage); whatever the test does to it, the next test finds it running."""
    _ensure_running(kafka_broker)
    yield kafka_broker
    _ensure_running(kafka_broker)


def _ensure_running(broker: KafkaBroker) -> None:
    if broker.running:
        return
    broker.stop()  # reap a process that died
    try:
        broker.start()
    except BrokerStartError as exc:
        pytest.fail(f"the Kafka broker did not start: {exc}")


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After the suite's last test (the next one is elsewhere, or none), stop the broker."""
    if nextitem is not None and Path(nextitem.path).resolve().parent == HERE:
        return
    for broker in _started:
        broker.stop()

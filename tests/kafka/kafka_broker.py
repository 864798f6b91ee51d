"""A real Apache Kafka broker for the tests: KRaft mode, one node that is both broker and
controller (no ZooKeeper, no Docker), from the jars `jvm-config/kafka-pom.xml` fetches
(`make kafka-jars`, which `make test-jars` runs).

`KafkaBroker(folder)` writes `server.properties` for two free loopback ports (clients, controller),
formats its log folder once (`kafka.tools.StorageTool format`, as `kafka-storage.sh format` does)
and runs `kafka.Kafka server.properties` in a process group of its own. `stop()` ends it (SIGTERM,
then SIGKILL to the group) and `start()` brings it back on the same ports and data, as an outage
would. `create_topic` and `read` use confluent-kafka, the client the producer uses.

Test support only: nothing here ships in the runtime package.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
KAFKA_JARS = REPO_ROOT / "jvm-config" / "kafka-jars"
START_TIMEOUT_S = 120.0  # a JVM on a busy 2-core machine
STOP_GRACE_S = 30.0
CLIENT_LOG = logging.getLogger("tests.kafka.clients")

_LOG4J2 = """\
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.state.name = state.change.logger
logger.state.level = WARN
"""


class BrokerStartError(RuntimeError):
    """The broker did not come up: the message has the tail of its log."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class KafkaBroker:
    """One KRaft node on 127.0.0.1: `.bootstrap` is its `host:port` for clients."""

    def __init__(self, folder: Path) -> None:
        if not any(KAFKA_JARS.glob("kafka_2.13-*.jar")):
            raise BrokerStartError(f"no Kafka jars in {KAFKA_JARS}: run `make kafka-jars`")
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port, self.controller_port = free_port(), free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.properties = folder / "server.properties"
        self.log_path = folder / "broker.log"
        self.data = folder / "data"
        (folder / "log4j2.properties").write_text(_LOG4J2)
        self.properties.write_text(self._server_properties())
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self._format()

    # -- the process ---------------------------------------------------------------------------

    def start(self) -> float:
        """Start the broker (again) and wait until it serves metadata; the seconds it took."""
        assert self.process is None, "already running"
        started = time.monotonic()
        with self.log_path.open("ab") as log:
            log.write(f"\n---- start {self.starts + 1} ----\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                [*self._java(), "kafka.Kafka", str(self.properties)],
                cwd=self.folder,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.starts += 1
        deadline = started + START_TIMEOUT_S
        admin = self._admin()
        while not self._serves(admin):
            if self.process.poll() is not None:
                self.process = None
                raise BrokerStartError(f"Kafka exited at start; log:\n{self.tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise BrokerStartError(f"Kafka not up after {START_TIMEOUT_S:.0f}s:\n{self.tail()}")
            time.sleep(0.5)
        return time.monotonic() - started

    def stop(self) -> None:
        """Stop the broker: SIGTERM (a clean shutdown), then SIGKILL to its whole group."""
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=STOP_GRACE_S)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return f"(no log at {self.log_path})"

    # -- clients -------------------------------------------------------------------------------

    def create_topic(
        self, name: str, partitions: int = 3, config: Mapping[str, str] | None = None
    ) -> None:
        from confluent_kafka.admin import NewTopic

        admin = self._admin()
        topic = NewTopic(name, num_partitions=partitions, replication_factor=1, config=config or {})
        for future in admin.create_topics([topic], operation_timeout=30).values():
            future.result(timeout=60)

    def read(self, topic: str, count: int, timeout: float = 60.0) -> list[Any]:
        """Every message of `topic` from its start, once `count` have come (or `timeout` passed:
        then what came), and then whatever else came within a second: (partition, offset, key,
        value) of each, in each partition's order."""
        from confluent_kafka import Consumer

        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"reader-{uuid.uuid4().hex}",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "logger": CLIENT_LOG,
            }
        )
        consumer.subscribe([topic])
        got: list[Any] = []
        deadline = time.monotonic() + timeout
        quiet_until: float | None = None
        try:
            while time.monotonic() < deadline:
                message = consumer.poll(0.2)
                if message is None:
                    if quiet_until is not None and time.monotonic() > quiet_until:
                        break
                    continue
                if message.error():
                    continue
                key = message.key()
                got.append(
                    (
                        message.partition(),
                        message.offset(),
                        None if key is None else key.decode(),
                        message.value().decode(),
                    )
                )
                if len(got) >= count and quiet_until is None:
                    quiet_until = time.monotonic() + 1.0
        finally:
            consumer.close()
        return got

    # -- set-up --------------------------------------------------------------------------------

    def _java(self) -> list[str]:
        return [
            "java",
            "-Xms128m",
            "-Xmx512m",
            "-XX:+UseG1GC",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.folder / 'log4j2.properties'}",
            "-cp",
            f"{KAFKA_JARS}/*",
        ]

    def _format(self) -> None:
        """`kafka-storage format`: the log folder gets its cluster id and node id, once."""
        cluster = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        done = subprocess.run(
            [*self._java(), "kafka.tools.StorageTool", "format", f"--cluster-id={cluster}",
             "-c", str(self.properties)],  # `=`: an id may start with "-"
            cwd=self.folder, capture_output=True, text=True, timeout=START_TIMEOUT_S,
        )  # fmt: skip
        if done.returncode != 0:
            raise BrokerStartError(f"kafka-storage format failed:\n{done.stdout}\n{done.stderr}")

    def _server_properties(self) -> str:
        settings = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "listeners": (
                f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}"
            ),
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.data),
            "num.partitions": "3",
            "auto.create.topics.enable": "false",  # a test names the topics it uses
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "3",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "num.network.threads": "2",
            "num.io.threads": "2",
        }
        return "".join(f"{k}={v}\n" for k, v in settings.items())

    def _admin(self) -> Any:
        """An admin client that logs through Python logging (pytest keeps it), not to stderr."""
        from confluent_kafka.admin import AdminClient

        return AdminClient({"bootstrap.servers": self.bootstrap, "logger": CLIENT_LOG})

    @staticmethod
    def _serves(admin: Any) -> bool:
        """The broker answers a metadata request (its listener is up and it joined the quorum)."""
        try:
            metadata = admin.list_topics(timeout=2)
        except Exception:
            return False
        return bool(metadata.brokers)

"""The real listener with ITS Kafka transport -> Kafka (real broker) -> `serve` (Kafka in) -> a
real Marquez: the e2e job (tests/e2e/jobs/clean_job.py) under spark-submit with
`spark.openlineage.transport.type=kafka`, its events read by `serve` from the topic, evaluated
with the e2e contracts, and the assertions read back through Marquez's REST API -- the same
verdicts as the HTTP path (tests/e2e/test_marquez_e2e.py).

The listener jar does not shade the Kafka client: `kafka-clients` comes from `jvm-config/jars`
(`jvm-config/pom.xml`, `make jars`), or from `jvm-config/kafka-jars` (the same artifact, fetched
for the broker) where the jars were fetched before it was added."""

from __future__ import annotations

import re
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka_broker import KafkaBroker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from faultkit import REPO_ROOT, ServeProcess, record_fault
from kafkakit import committed, end_offsets, wait_until
from marquez_server import MarquezHandle, resolve_marquez_jar, start_marquez, start_postgres
from test_marquez_e2e import CLEAN_VERDICTS, RAW_VERDICTS

from lineage_quality.sparksubmit import listener_jar, spark_submit

pytestmark = [pytest.mark.kafka, pytest.mark.e2e, pytest.mark.marquez]
NAMESPACE = "e2e-kafka"
TOPIC = "openlineage.events"


@pytest.fixture(scope="module")
def marquez(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MarquezHandle]:
    """A real Marquez (local PostgreSQL + the marquez-api jar), as tests/e2e's fixture; a
    Marquez that cannot be had FAILS the test."""
    jar, reason = resolve_marquez_jar(REPO_ROOT)
    if jar is None:
        pytest.fail(f"no Marquez to test against: {reason}")
    workdir = tmp_path_factory.mktemp("marquez")
    with start_postgres(workdir) as pg, start_marquez(jar, pg, workdir) as handle:
        yield handle


def _kafka_clients() -> Path:
    for folder in ("jars", "kafka-jars"):
        found = sorted((REPO_ROOT / "jvm-config" / folder).glob("kafka-clients-*.jar"))
        if found:
            return found[-1]
    pytest.fail("no kafka-clients jar: run `make jars` (jvm-config/pom.xml fetches it)")


def _assertions(marquez: MarquezHandle, path: Path) -> list[dict[str, Any]]:
    name = urllib.parse.quote(str(path), safe="")
    try:
        dataset = marquez.get_json(f"/api/v1/namespaces/file/datasets/{name}")
    except Exception:  # not there yet
        return []
    facet = (dataset.get("facets") or {}).get("dataQualityAssertions") or {}
    return list(facet.get("assertions") or [])


def _verdicts(marquez: MarquezHandle, path: Path) -> dict[str, bool] | None:
    """The contract's assertions (serve's marks from upstream aside: the HTTP e2e's producer
    keeps no lineage)."""
    found = [a for a in _assertions(marquez, path) if a.get("assertion") != "upstreamQuality"]
    return {a["name"]: a["success"] for a in found} or None


def test_listener_kafka_transport_to_serve_to_marquez(
    running_broker: KafkaBroker, marquez: MarquezHandle, tmp_path: Path
) -> None:
    running_broker.create_topic(TOPIC, partitions=3)
    config = tmp_path / "openlineage.yml"
    config.write_text(f"transport:\n  type: http\n  url: {marquez.url}\n  timeout: 60\n")
    group = "lq-e2e"
    serve = ServeProcess(
        [
            "--contracts", str(REPO_ROOT / "tests" / "e2e" / "contracts"),
            "--port", "0",
            "--spool", str(tmp_path / "spool.db"),
            "--openlineage-config", str(config),
            "--kafka-bootstrap-servers", running_broker.bootstrap,
            "--kafka-topic", TOPIC,
            "--kafka-group-id", group,
        ],
        tmp_path / "serve.log",
    )  # fmt: skip
    raw, clean = tmp_path / "e2e-data" / "raw", tmp_path / "e2e-data" / "clean"
    try:
        serve.wait_ready(timeout=300)
        conf = {
            "spark.jars": f"{listener_jar(REPO_ROOT)},{_kafka_clients()}",
            "spark.extraListeners": "io.openlineage.spark.agent.OpenLineageSparkListener",
            "spark.openlineage.namespace": NAMESPACE,
            "spark.ui.enabled": "false",
            "spark.openlineage.transport.type": "kafka",
            "spark.openlineage.transport.topicName": TOPIC,
            "spark.openlineage.transport.properties.bootstrap.servers": running_broker.bootstrap,
            "spark.openlineage.transport.properties.acks": "all",
            "spark.openlineage.transport.properties.key.serializer":
                "org.apache.kafka.common.serialization.StringSerializer",
            "spark.openlineage.transport.properties.value.serializer":
                "org.apache.kafka.common.serialization.StringSerializer",
        }  # fmt: skip
        args: list[str] = ["--master", "local[1]"]
        for key, value in conf.items():
            args += ["--conf", f"{key}={value}"]
        log = tmp_path / "spark-submit.log"
        result = spark_submit(
            [*args, str(REPO_ROOT / "tests" / "e2e" / "jobs" / "clean_job.py"), str(raw),
             str(clean)],
            cwd=REPO_ROOT, log_file=log,
        )  # fmt: skip
        assert result.returncode == 0, log.read_text()[-4000:]
        messages = running_broker.read(TOPIC, 1, timeout=60)
        assert wait_until(lambda: _verdicts(marquez, clean) == CLEAN_VERDICTS, 300), (
            _verdicts(marquez, clean), serve.log_path.read_text()[-3000:],
        )  # fmt: skip
        assert wait_until(lambda: _verdicts(marquez, raw) == RAW_VERDICTS, 60)
        # serve keeps lineage: clean, derived from raw whose id rule failed, is marked from there
        marks = [a for a in _assertions(marquez, clean) if a.get("assertion") == "upstreamQuality"]
        assert marks and all(a["success"] is False for a in marks), marks
        assert not [a for a in _assertions(marquez, raw) if a.get("assertion") == "upstreamQuality"]
        end = end_offsets(running_broker, TOPIC, 3)
        assert wait_until(lambda: committed(running_broker, group, TOPIC, 3) == end, 60)
    finally:
        serve.stop()
    # every message the listener wrote is keyed by its run (OpenLineage's Java transport)
    assert messages and all(str(key).startswith("run:") for _, _, key, _ in messages), messages[:3]
    runs: dict[str, set[int]] = {}
    for partition, _, key, _ in messages:
        runs.setdefault(key, set()).add(partition)
    assert all(len(parts) == 1 for parts in runs.values()), runs  # a run in one partition
    output = serve.log_path.read_text()
    assert "consuming lineage events from Kafka topic(s) openlineage.events" in output
    taken = re.search(r"Kafka in: (\d+) event\(s\) taken, 0 message\(s\) dead-lettered", output)
    assert taken is not None, output[-2000:]  # every message was an event
    assert int(taken.group(1)) == len(messages)
    record_fault(
        "kafka in: the listener's Kafka transport -> serve -> Marquez",
        len(messages), len(messages), int(taken.group(1)), runs=len(runs),
    )  # fmt: skip

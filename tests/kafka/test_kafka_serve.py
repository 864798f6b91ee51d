"""`lineage-quality serve` forwarding to a real Kafka broker from the usual OpenLineage
configuration (`--openlineage-config` with `type: kafka`): its own acknowledged transport is used,
every event arrives keyed by its run, and with debug logging on (librdkafka's debug lines too) no
log line holds the SASL password of the configuration."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from kafka_broker import KafkaBroker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
from faultkit import Sender, ServeProcess, make_event, record_fault

pytestmark = pytest.mark.kafka
SASL_PASSWORD = "sasl-pw-Hq7Vz3xK"
SSL_KEY_PASSWORD = "ssl-key-pw-Wm4Rt8"


def test_serve_forwards_to_kafka_and_keeps_its_secrets_out_of_the_log(
    running_broker: KafkaBroker, tmp_path: Path
) -> None:
    topic, runs, per_run = "lineage-serve", 4, 5
    running_broker.create_topic(topic, partitions=2)
    config = tmp_path / "openlineage.yml"
    config.write_text(
        "transport:\n"
        "  type: kafka\n"
        f"  topic: {topic}\n"
        "  config:\n"
        f"    bootstrap.servers: '{running_broker.bootstrap}'\n"
        "    sasl.username: lineage\n"  # unused on PLAINTEXT, but read and held by the client
        f"    sasl.password: '{SASL_PASSWORD}'\n"
        f"    ssl.key.password: '{SSL_KEY_PASSWORD}'\n"
        "    debug: 'broker,topic,msg'\n"  # librdkafka's own lines, through Python logging
    )
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    log = tmp_path / "serve.log"
    serve = ServeProcess(
        [
            "--contracts", str(contracts),
            "--port", "0",
            "--spool", str(tmp_path / "spool.db"),
            "--openlineage-config", str(config),
        ],
        log,
    )  # fmt: skip
    events = [make_event(run, seq) for seq in range(per_run) for run in range(runs)]
    sender = Sender(serve.url)
    try:
        accepted = sum(sender.post(e) == 201 for e in events)
        messages = running_broker.read(topic, len(events), timeout=90)
    finally:
        sender.close()
        serve.stop()
    assert accepted == len(events)
    keys = {json.loads(m[3])["run"]["runId"]: m[2] for m in messages}
    assert keys == {
        e["run"]["runId"]: f"run:reliability/{e['job']['name']}" for e in events
    }  # one key per run: its own job (no parent)
    assert sorted(m[3] for m in messages) == sorted(json.dumps(e) for e in events)
    output = log.read_text()
    assert "forwarding lineage events through KafkaAckedTransport" in output
    assert "lineage_quality.kafka.librdkafka" in output  # its debug lines were logged, masked
    assert SASL_PASSWORD not in output and SSL_KEY_PASSWORD not in output
    record_fault("kafka out: serve from openlineage.yml", len(events), accepted, len(messages))

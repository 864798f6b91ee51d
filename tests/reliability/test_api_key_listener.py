"""The real OpenLineage Spark listener, configured with `transport.auth.type=api_key`, gets its
events into a producer that requires the key; the key never shows in the producer's logs."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from faultkit import REPO_ROOT, RecordingSink, http_transport, record_fault

from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.settings import Settings
from lineage_quality.sparksubmit import listener_args, listener_jar, spark_submit

pytestmark = pytest.mark.e2e

KEY = "listener-key-Hq83vR2c"


def test_listener_with_api_key_auth_is_accepted(
    tmp_path: Path, sink: RecordingSink, caplog: pytest.LogCaptureFixture
) -> None:
    listener_jar(REPO_ROOT)  # the line's listener jar: make jars SPARK=...
    caplog.set_level(logging.DEBUG)
    producer = Producer(
        Evaluator([]),
        Forwarder(http_transport(sink)),
        Spool(tmp_path / "spool.db"),
        Settings.of(port=0, api_key=KEY),
    )
    producer.start()
    log = tmp_path / "spark-submit.log"
    try:
        data = tmp_path / "e2e-data"
        result = spark_submit(
            [
                *listener_args(
                    REPO_ROOT, producer.url, {
                        "spark.openlineage.transport.auth.type": "api_key",
                        "spark.openlineage.transport.auth.apiKey": KEY,
                        "spark.openlineage.namespace": "api-key",
                        "spark.ui.enabled": "false",
                    }, master="local[1]",
                ),
                str(REPO_ROOT / "tests" / "e2e" / "jobs" / "clean_job.py"),
                str(data / "raw"), str(data / "clean"),
            ],
            cwd=REPO_ROOT,
            log_file=log,
        )  # fmt: skip
        assert result.returncode == 0, log.read_text()[-4000:]
        assert producer.spool.wait_empty(timeout=120)
    finally:
        producer.stop()
    assert "missing or wrong API key" not in caplog.text  # no request was refused
    forwarded = len(sink.events)
    assert forwarded >= 4  # START/COMPLETE of the application and of each write
    assert {e["eventType"] for e in sink.events} >= {"START", "COMPLETE"}
    assert KEY not in caplog.text
    record_fault(
        "real listener with api_key auth",
        sent=forwarded,
        accepted=forwarded,
        forwarded=forwarded,
        refused_401=0,
    )

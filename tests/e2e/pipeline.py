"""Run the e2e job with the real OpenLineage listener against an in-process producer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from openlineage.client.transport import Transport

from lineage_quality.contracts import load_contracts
from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.settings import Settings
from lineage_quality.sparksubmit import listener_args, spark_submit

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
EVALUATOR_APP = "lineage-quality-evaluator"


class RecordingSpool(Spool):
    """A real spool that also remembers every body it was given, to compare in and out."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.received: list[str] = []

    def put(self, body: str, *args: Any, **kwargs: Any) -> int:
        # whatever else put takes goes through unchanged, so this override cannot fall behind it
        self.received.append(body)
        return super().put(body, *args, **kwargs)


@contextmanager
def producer_for(spark: Any, transport: Transport, workdir: Path) -> Iterator[Producer]:
    producer = Producer(
        Evaluator(load_contracts([HERE / "contracts"]), spark=spark),
        Forwarder(transport),
        RecordingSpool(workdir / "spool.db"),
        Settings.of(port=0),
    )
    producer.start()
    try:
        yield producer
    finally:
        producer.stop()


def submit_job(producer: Producer, workdir: Path, namespace: str) -> tuple[Path, Path]:
    data = workdir / "e2e-data"
    raw, clean = data / "raw", data / "clean"
    log = workdir / "spark-submit.log"
    result = spark_submit(
        [
            *listener_args(
                REPO_ROOT, producer.url, {
                    "spark.openlineage.namespace": namespace, "spark.ui.enabled": "false",
                }, master="local[1]",
            ),
            str(HERE / "jobs" / "clean_job.py"), str(raw), str(clean),
        ],
        cwd=REPO_ROOT,
        log_file=log,
    )  # fmt: skip
    assert result.returncode == 0, log.read_text()[-4000:]
    assert producer.spool.wait_empty(timeout=300), "producer did not forward every event"
    return raw, clean


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_with_producer(
    spark: Any,
    contracts: Path,
    job: str,
    job_args: list[str],
    workdir: Path,
    conf: dict[str, str],
    history: Any = None,
    shacl: Any = None,
    lineage: Any = None,
    reuse: Any = None,
    sampling: Any = None,
) -> tuple[list[dict[str, Any]], Evaluator]:
    """Run `jobs/<job>` under spark-submit with the real listener pointed at a producer that
    evaluates `contracts` (keeping values in `history`, a HistoryStore, if given) and forwards to
    a file; the forwarded events and the evaluator. `shacl`: ShaclOptions for .ttl contracts;
    `lineage`: a LineageKeeper (lineage kept and outputs marked, as serve does); `reuse`: the
    verdicts of evaluated versions (evaluation/reuse.py), as serve keeps them; `sampling`:
    failing-row samples taken as serve takes them (lineage_quality.samples.Sampling)."""
    from openlineage.client.transport.file import FileConfig, FileTransport

    sink = workdir / "events.jsonl"
    evaluator = Evaluator(
        load_contracts([contracts], shacl=shacl),
        spark=spark,
        history=history,
        reuse=reuse,
        sampling=sampling,
    )
    producer = Producer(
        evaluator,
        Forwarder(FileTransport(FileConfig(log_file_path=str(sink), append=True))),
        RecordingSpool(workdir / "spool.db"),
        Settings.of(port=0),
        lineage=lineage,
    )
    producer.start()
    try:
        log = workdir / "spark-submit.log"
        settings = {"spark.ui.enabled": "false", **conf}
        result = spark_submit(
            [
                *listener_args(REPO_ROOT, producer.url, settings, master="local[1]"),
                str(HERE / "jobs" / job), *job_args,
            ],
            cwd=REPO_ROOT,
            log_file=log,
        )  # fmt: skip
        assert result.returncode == 0, log.read_text()[-4000:]
        assert producer.spool.wait_empty(timeout=300), "producer did not forward every event"
    finally:
        producer.stop()
    return read_jsonl(sink), evaluator

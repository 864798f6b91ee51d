"""Two `serve` processes in one consumer group, sharing one PostgreSQL history store, one of them
SIGKILLed mid-stream (real broker, real PostgreSQL, real Spark evaluators).

`a` commits no offset after the group formed (`--kafka-commit-every 600`), so after its death every
event it consumed is read again by `b`: each COMPLETE `a` evaluated and kept in the shared store
is a redelivered COMPLETE there. Counted exactly:
- every COMPLETE's enriched event reaches the sink, with the verdict its data deserves;
- each COMPLETE was kept in the shared store exactly once: evaluated once, by one process (`b`
  reuses what `a` kept; it would evaluate again only what `a` evaluated but had not kept yet);
- the copies of a COMPLETE forwarded twice (by `a` before its death, then by `b`) are identical;
- `gate --run-id --history URL` answers for the runs `a` evaluated, `a` being dead: exit 1 where
  the BLOCK rule failed, 0 where it passed.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from kafka_broker import KafkaBroker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from faultkit import REPO_ROOT, RecordingSink, make_event, record_fault
from kafkakit import kafka_serve, produce, wait_until
from marquez_server import start_postgres

from lineage_quality.producer.shared_runs import event_key

pytestmark = pytest.mark.kafka
PARTITIONS = 4
RUNS = 16

CONTRACT = """\
apiVersion: v3.0.2
kind: DataContract
id: {key}
version: 1.0.0
status: active
schema:
  - name: {key}
    customProperties:
      - property: openlineage.namespace
        value: file
      - property: openlineage.name
        value: "{path}"
    properties:
      - name: id
        quality:
          - metric: nullValues
            mustBe: 0
            severity: error
            name: {key}_id_not_null
"""


def _complete(run: int, data: Path) -> dict[str, Any]:
    return make_event(run, 1, "COMPLETE", inputs=[{"namespace": "file", "name": str(data)}])


def _verdicts(event: dict[str, Any]) -> dict[str, bool]:
    """The `*_id_not_null` assertions of the event's inputs: name -> success."""
    found = {}
    for ds in event.get("inputs") or []:
        facet = (ds.get("inputFacets") or {}).get("dataQualityAssertions") or {}
        for a in facet.get("assertions") or []:
            if a["name"].endswith("_id_not_null"):
                found[a["name"]] = a["success"]
    return found


def _gate(run_id: str, url: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "lineage_quality.cli", "gate", "--run-id", run_id,
         "--history", url],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def test_two_consumers_one_killed_every_complete_forwarded_and_evaluated_once(
    running_broker: KafkaBroker, tmp_path: Path
) -> None:
    topic, group = "lineage-shared", "lq-shared"
    running_broker.create_topic(topic, partitions=PARTITIONS)
    good, bad = tmp_path / "data" / "good", tmp_path / "data" / "bad"
    for folder, rows in ((good, '{"id": 1}\n{"id": 2}\n'), (bad, '{"id": 1}\n{"id": null}\n')):
        folder.mkdir(parents=True)
        (folder / "part-00000.json").write_text(rows)
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    for key, path in (("good", good), ("bad", bad)):
        (contracts / f"{key}.yaml").write_text(CONTRACT.format(key=key, path=path))
    completes = {run: _complete(run, bad if run % 3 == 0 else good) for run in range(RUNS)}
    sink = RecordingSink()
    group_conf = ["--kafka-conf", "session.timeout.ms=6000",
                  "--kafka-conf", "heartbeat.interval.ms=1000"]  # fmt: skip
    with start_postgres(tmp_path / "pg") as pg:
        url = f"postgresql://{pg.user}:{pg.password}@{pg.host}:{pg.port}/{pg.database}"
        common = ["--history", url, "--write-through-below", "0", *group_conf]
        a = kafka_serve(running_broker, topic, group, tmp_path, sink, contracts,
                        [*common, "--kafka-commit-every", "600"], name="a")  # fmt: skip
        b = kafka_serve(running_broker, topic, group, tmp_path, sink, contracts, common, name="b")
        sender: threading.Thread | None = None
        try:
            a.wait_ready(timeout=300)
            b.wait_ready(timeout=300)
            assert wait_until(lambda: _owns_partitions(a) and _owns_partitions(b), 90), (
                a.log_path.read_text()[-2000:] + b.log_path.read_text()[-2000:]
            )
            stream = [make_event(run, 0, "START") for run in range(RUNS)]
            stream += [completes[run] for run in range(RUNS)]

            def send() -> None:
                for event in stream:
                    produce(running_broker, topic, [event])
                    time.sleep(0.1)

            sender = threading.Thread(target=send, daemon=True)
            sender.start()
            # a is killed once it kept 3 evaluated COMPLETEs in the shared store
            assert wait_until(lambda: len(_kept(a.log_path)) >= 3, 240), (
                a.log_path.read_text()[-3000:]
            )
            a.kill9()
            sender.join(timeout=60)
            want = {e["run"]["runId"] for e in completes.values()}
            assert sink.wait_for(lambda s: _completes_at(s) >= want, 300), (
                b.log_path.read_text()[-3000:]
            )
            time.sleep(2)  # a late duplicate would show now
            kept_a, kept_b = _kept(a.log_path), _kept(b.log_path)
            reused_b = _reused(b.log_path)
            verdict_rows = _count(url, "SELECT count(*) FROM lq_run_verdicts")
            # asked of the store, a being dead: the runs a evaluated
            a_runs = re.findall(r"of run (\S+): kept in the shared store", a.log_path.read_text())
            exit_codes = {run_id: _gate(run_id, url) for run_id in a_runs}
        finally:
            if sender is not None:
                sender.join(timeout=60)
            for serve in (a, b):
                if serve.proc.poll() is None:
                    serve.stop()
            sink.close()

    # each COMPLETE kept once: evaluated by one process only
    assert sorted(kept_a + kept_b) == sorted(event_key(e)[:16] for e in completes.values())
    assert set(kept_a).isdisjoint(kept_b)
    # b read again what a had consumed (no commit from a): a's evaluated COMPLETEs came to b
    # and went out with a's facets, not evaluated again
    assert set(reused_b) == set(kept_a), (reused_b, kept_a)
    by_run: dict[str, list[dict[str, Any]]] = {}
    for event in sink.events:
        if event["eventType"] == "COMPLETE":
            by_run.setdefault(event["run"]["runId"], []).append(event)
    for run, sent in completes.items():
        copies = by_run[sent["run"]["runId"]]
        assert all(c == copies[0] for c in copies), f"run {run}: copies differ"
        expected = {("bad" if run % 3 == 0 else "good") + "_id_not_null": run % 3 != 0}
        assert _verdicts(copies[0]) == expected, (run, _verdicts(copies[0]))
    assert verdict_rows == RUNS  # one row per (COMPLETE, run id): no parent runs here
    for run_id, (code, said) in exit_codes.items():
        blocked = int(run_id[-12:]) % 3 == 0  # its input is the bad data: a BLOCK rule failed
        assert code == (1 if blocked else 0), (run_id, code, said)
        assert "2 verdict(s)" in said, said  # id_exists and *_id_not_null
        assert ("bad_id_not_null: FAILED" in said) is blocked, said
    duplicates = sum(len(c) - 1 for c in by_run.values())
    forwarded = len(by_run)
    record_fault(
        "kafka in: 2 consumers, one kill -9 (COMPLETEs)", RUNS, RUNS, forwarded,
        evaluated_by_killed=len(kept_a), evaluated_by_other=len(kept_b),
        reused_not_evaluated=len(reused_b), complete_duplicates=duplicates,
    )  # fmt: skip


def _owns_partitions(serve: Any) -> bool:
    """Its last assignment names partitions (the group formed with both members)."""
    found = re.findall(r"Kafka in: (assigned|revoked) (.*)", serve.log_path.read_text())
    return bool(found) and found[-1][0] == "assigned" and found[-1][1] != "nothing"


def _kept(log: Path) -> list[str]:
    return re.findall(r"event ([0-9a-f]{16}) of run \S+: kept in the shared store", log.read_text())


def _reused(log: Path) -> list[str]:
    return re.findall(r"event ([0-9a-f]{16}) of run \S+: evaluated already", log.read_text())


def _completes_at(sink: RecordingSink) -> set[str]:
    return {e["run"]["runId"] for e in sink.events if e["eventType"] == "COMPLETE"}


def _count(url: str, sql: str) -> int:
    with psycopg.connect(url) as db:
        return int(db.execute(sql).fetchone()[0])  # type: ignore[index]


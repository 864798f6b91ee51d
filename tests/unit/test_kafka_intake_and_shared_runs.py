"""Kafka in and shared run verdicts without a broker or Spark (issue 43): the consumer's settings
(never committing before an event is kept), the librdkafka settings read from flags and files,
their secrets masked; the shared run verdicts on SQLite (bounded), a redelivered COMPLETE reused
by a second producer instead of evaluated again, `gate --run-id --history`."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from lineage_quality import rawjson
from lineage_quality.bounds import SharedRunBounds
from lineage_quality.cli.main import main
from lineage_quality.engine import verdict
from lineage_quality.errors import ConfigError
from lineage_quality.evaluation.refs import DatasetRef
from lineage_quality.kinds import RuleKind
from lineage_quality.producer import Producer, Spool
from lineage_quality.producer.kafka.consumer import (
    consumer_settings,
    settings_from_pairs,
    topics_of,
    wanted,
)
from lineage_quality.producer.secrets import client_secrets
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.shared_runs import event_key, open_shared_runs
from lineage_quality.results import RuleResult
from lineage_quality.rules import Operator, Rule, Threshold

OUT = DatasetRef("outputs", 0, "file", "/lake/out")
RULE = Rule(
    id="out.id",
    kind=RuleKind.NULL_VALUES,
    columns=["id"],
    threshold=Threshold(Operator.MUST_BE, 0),
    name="id_not_null",
    action="BLOCK",
)


def test_the_consumer_never_commits_on_its_own_and_starts_a_new_group_at_the_beginning() -> None:
    settings = Settings(kafka_bootstrap_servers="b1:9092,b2:9092", kafka_topics="a, b,")
    assert wanted(settings) and topics_of(settings) == ["a", "b"]
    conf = consumer_settings(settings)
    assert conf["bootstrap.servers"] == "b1:9092,b2:9092"
    assert conf["group.id"] == "lineage-quality"
    assert conf["enable.auto.commit"] is False and conf["enable.auto.offset.store"] is False
    assert conf["auto.offset.reset"] == "earliest"
    own = Settings(kafka_config={"bootstrap.servers": "b:1", "group.id": "mine",
                                 "auto.offset.reset": "latest"})  # fmt: skip
    assert wanted(own)
    assert consumer_settings(own)["group.id"] == "mine"
    assert consumer_settings(own)["auto.offset.reset"] == "latest"
    assert not wanted(Settings())
    with pytest.raises(ConfigError, match=r"enable\.auto\.commit=true would commit"):
        consumer_settings(Settings(kafka_config={"bootstrap.servers": "b:1",
                                                 "enable.auto.commit": "true"}))  # fmt: skip
    with pytest.raises(ConfigError, match="no topic"):
        topics_of(Settings(kafka_bootstrap_servers="b:1", kafka_topics=" , "))


def test_kafka_settings_from_a_file_then_flags_and_their_secrets(tmp_path: Path) -> None:
    conf = tmp_path / "kafka.properties"
    conf.write_text(
        "# the cluster\nsecurity.protocol=SASL_SSL\nsasl.mechanism = SCRAM-SHA-512\n"
        "sasl.password=pw-Zq8xK3\n\nssl.key.password=key=with=equals\n"
    )
    found = settings_from_pairs(["sasl.mechanism=PLAIN", "client.id=lq"], [str(conf)])
    assert found == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",  # the flag after the file
        "sasl.password": "pw-Zq8xK3",
        "ssl.key.password": "key=with=equals",
        "client.id": "lq",
    }
    assert sorted(client_secrets(found)) == ["key=with=equals", "pw-Zq8xK3"]
    assert "pw-Zq8xK3" not in repr(Settings(kafka_config=found))
    with pytest.raises(ConfigError, match="not KEY=VALUE"):
        settings_from_pairs(["sasl.password"], [])
    with pytest.raises(ConfigError, match="--kafka-conf-file"):
        settings_from_pairs([], [str(tmp_path / "missing")])


def _event(run: str, when: str = "2026-01-01T00:00:00Z") -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": when,
        "producer": "p",
        "run": {"runId": run},
        "job": {"namespace": "spark", "name": "job"},
        "inputs": [],
        "outputs": [{"namespace": "file", "name": "/lake/out"}],
    }


def test_shared_runs_keep_verdicts_by_run_and_events_by_identity(tmp_path: Path) -> None:
    store = open_shared_runs(tmp_path / "history.db")
    first, again = _event("r1"), _event("r1")
    later = _event("r1", "2026-01-01T00:00:01Z")
    assert event_key(first) == event_key(again) != event_key(later)
    assert store.evaluated(first) is None and store.verdicts("r1") is None
    store.add_verdicts(first, ["r1", "parent"], json.dumps([{"rule": "a"}]))
    store.add_verdicts(first, ["r1", "parent"], json.dumps([{"rule": "a"}]))  # again: once
    store.keep_event(first, '{"enriched": 1}')
    store.add_verdicts(later, ["r1"], json.dumps([{"rule": "b"}]))
    assert store.evaluated(again) == ('{"enriched": 1}', '[{"rule": "a"}]')
    assert store.evaluated(later) is None
    assert store.verdicts("r1") == [{"rule": "a"}, {"rule": "b"}]
    assert store.verdicts("parent") == [{"rule": "a"}]
    store.close()


def test_shared_runs_are_bounded(tmp_path: Path) -> None:
    store = open_shared_runs(
        tmp_path / "history.db", SharedRunBounds(max_rows=5, max_bytes=10**6, check_every=1)
    )
    for i in range(12):
        event = _event(f"r{i}", f"2026-01-01T00:00:{i:02d}Z")
        store.add_verdicts(event, [f"r{i}"], "[]")
        store.keep_event(event, "{}")
        time.sleep(0.002)  # distinct times: the oldest go first
    assert store.verdicts("r0") is None and store.evaluated(_event("r0")) is None
    assert store.verdicts("r11") == []
    rows = store._db.execute("SELECT count(*) FROM lq_run_verdicts").fetchone()[0]
    assert rows <= 5
    store.expire(now_ms=int(time.time() * 1000) + 31 * 86_400_000)  # past the retention
    assert store.verdicts("r11") is None
    store.close()


class Evaluator:
    """Binds /lake/out of a COMPLETE; counts its evaluations."""

    def __init__(self) -> None:
        self.evaluations = 0

    def bound(self, event: Mapping[str, Any]) -> dict[DatasetRef, list[Any]]:
        return {OUT: [object()]} if event.get("eventType") == "COMPLETE" else {}

    def evaluate_each(
        self, event: Mapping[str, Any], job_group: str, bound: Any
    ) -> Iterator[tuple[DatasetRef, list[RuleResult]]]:
        self.evaluations += 1
        yield OUT, [verdict(RULE, 3, 10)]


class Sink:
    def __init__(self) -> None:
        self.sent: list[str] = []

    def send(self, body: str) -> None:
        self.sent.append(body)

    def close(self) -> None:
        pass


def _producer(tmp_path: Path, name: str, evaluator: Evaluator, sink: Sink) -> Producer:
    return Producer(
        evaluator,  # type: ignore[arg-type]
        sink,  # type: ignore[arg-type]
        Spool(tmp_path / f"{name}.spool.db"),
        Settings(port=0),
        shared=open_shared_runs(tmp_path / "history.db"),
    )


def test_a_redelivered_complete_is_not_evaluated_again_by_another_producer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = json.dumps(_event("0190e6f0-0000-7000-8000-000000000001"))
    first_eval, second_eval = Evaluator(), Evaluator()
    first_sink, second_sink = Sink(), Sink()
    first = _producer(tmp_path, "a", first_eval, first_sink)
    second = _producer(tmp_path, "b", second_eval, second_sink)
    for producer in (first, second):
        producer.start()
    try:
        first.intake.accept(body, rawjson.loads(body))
        assert first.spool.wait_empty(timeout=20)
        second.intake.accept(body, rawjson.loads(body))  # read again by the partition's next owner
        assert second.spool.wait_empty(timeout=20)
        status, doc = second.run_status("0190e6f0-0000-7000-8000-000000000001")
        unknown = second.run_status("0190e6f0-0000-7000-8000-00000000ffff")
    finally:
        for producer in (first, second):
            producer.stop()
    assert (first_eval.evaluations, second_eval.evaluations) == (1, 0)
    assert second_sink.sent == first_sink.sent  # the same enriched text
    facet = json.loads(second_sink.sent[0])["outputs"][0]["facets"]["dataQualityAssertions"]
    assert [a["success"] for a in facet["assertions"]] == [False]
    assert status == 200 and [r["rule"] for r in doc["blocking"]] == ["id_not_null"]
    assert unknown[0] == 404
    # gate reads the shared store: the run's BLOCK rule failed
    code = main(["gate", "--run-id", "0190e6f0-0000-7000-8000-000000000001",
                 "--history", str(tmp_path / "history.db")])  # fmt: skip
    said = capsys.readouterr()
    assert code == 1 and "BLOCK" in said.out and "id_not_null: FAILED" in said.out
    assert main(["gate", "--run-id", "nope", "--history", str(tmp_path / "history.db")]) == 2
    assert "unknown run" in capsys.readouterr().err
    assert main(["gate", "--run-id", "x", "--history", str(tmp_path / "none.db")]) == 2


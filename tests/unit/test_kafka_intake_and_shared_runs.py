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
from lineage_quality.kinds import RuleKind
from lineage_quality.producer import Producer, Spool
from lineage_quality.producer.kafka.conf_file import settings_from_pairs
from lineage_quality.producer.kafka.consumer import consumer_settings, topics_of, wanted
from lineage_quality.producer.secrets import client_secrets
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.shared_runs import event_key, open_shared_runs
from lineage_quality.results import RuleResult
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.refs import DatasetRef

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
    settings = Settings.of(kafka_bootstrap_servers="b1:9092,b2:9092", kafka_topics="a, b,")
    assert wanted(settings) and topics_of(settings) == ["a", "b"]
    conf = consumer_settings(settings)
    assert conf["bootstrap.servers"] == "b1:9092,b2:9092"
    assert conf["group.id"] == "lineage-quality"
    assert conf["enable.auto.commit"] is False and conf["enable.auto.offset.store"] is False
    assert conf["auto.offset.reset"] == "earliest"
    own = Settings.of(kafka_config={"bootstrap.servers": "b:1", "group.id": "mine",
                                 "auto.offset.reset": "latest"})  # fmt: skip
    assert wanted(own)
    assert consumer_settings(own)["group.id"] == "mine"
    assert consumer_settings(own)["auto.offset.reset"] == "latest"
    assert not wanted(Settings())
    with pytest.raises(ConfigError, match=r"enable\.auto\.commit=true would commit"):
        consumer_settings(Settings.of(kafka_config={"bootstrap.servers": "b:1",
                                                 "enable.auto.commit": "true"}))  # fmt: skip
    with pytest.raises(ConfigError, match="no topic"):
        topics_of(Settings.of(kafka_bootstrap_servers="b:1", kafka_topics=" , "))


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
    assert "pw-Zq8xK3" not in repr(Settings.of(kafka_config=found))
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
    store.expire(now_ms=int(time.time() * 1000) + 8 * 86_400_000)  # past 7 days: retention
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
        Settings.of(port=0),
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
        status, doc = second.runs.status("0190e6f0-0000-7000-8000-000000000001")
        unknown = second.runs.status("0190e6f0-0000-7000-8000-00000000ffff")
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



# -- the consumer's loop over a stand-in for confluent-kafka's Consumer -------------------------


class Message:
    def __init__(self, partition: int, offset: int, value: bytes | None) -> None:
        self._partition, self._offset, self._value = partition, offset, value

    def topic(self) -> str:
        return "t"

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def value(self) -> bytes | None:
        return self._value

    def error(self) -> None:
        return None


class Consumer:
    """What KafkaIntake calls of confluent-kafka's Consumer; `script`: what each poll does (a
    message to return, or a callable run inside the poll, as librdkafka runs rebalance
    callbacks)."""

    def __init__(self, script: list[Any]) -> None:
        from confluent_kafka import TopicPartition

        self.script = script
        self.assigned = [TopicPartition("t", 0), TopicPartition("t", 1)]
        self.calls: list[tuple[str, Any]] = []
        self.on_revoke: Any = None

    def subscribe(self, topics: list[str], **callbacks: Any) -> None:
        self.on_revoke = callbacks["on_revoke"]

    def poll(self, timeout: float) -> Any:
        while self.script:
            step = self.script.pop(0)
            if callable(step):
                step(self)
                continue
            return step
        time.sleep(min(timeout, 0.01))
        return None

    def assignment(self) -> list[Any]:
        return list(self.assigned)

    def pause(self, parts: list[Any]) -> None:
        self.calls.append(("pause", sorted(p.partition for p in parts)))

    def resume(self, parts: list[Any]) -> None:
        self.calls.append(("resume", sorted(p.partition for p in parts)))

    def seek(self, part: Any) -> None:
        self.calls.append(("seek", (part.partition, part.offset)))

    def commit(self, offsets: list[Any], asynchronous: bool) -> list[Any]:
        assert asynchronous is False
        self.calls.append(("commit", sorted((p.partition, p.offset) for p in offsets)))
        return offsets

    def close(self) -> None:
        self.calls.append(("close", None))


def _revoke_partition_0(consumer: Consumer) -> None:
    from confluent_kafka import TopicPartition

    gone = [TopicPartition("t", 0)]
    consumer.assigned = [p for p in consumer.assigned if p.partition != 0]
    consumer.on_revoke(consumer, gone)


def _intake(
    tmp_path: Path,
    consumer: Consumer,
    accept: Any,
    monkeypatch: pytest.MonkeyPatch,
    accept_many: Any = None,
) -> Any:
    from lineage_quality.producer.kafka import consumer as consumer_module

    monkeypatch.setattr(consumer_module.KafkaIntake, "_new_consumer", lambda self: consumer)
    settings = Settings.of(kafka_bootstrap_servers="b:1", kafka_topics="t")
    intake = consumer_module.KafkaIntake(
        settings, accept, Spool(tmp_path / "spool.db"), accept_many=accept_many
    )
    consumer.subscribe(["t"], on_revoke=intake._revoked)
    return intake


def test_a_message_held_for_room_is_given_up_when_its_partition_is_revoked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lineage_quality.producer.spool import SpoolFullError

    body = json.dumps(_event("r1")).encode()
    taken: list[str] = []

    def accept(text: str, event: Any) -> None:
        if taken:  # the spool is full after the first
            raise SpoolFullError("spool is full")
        taken.append(text)

    fetched_before_pause = Message(1, 7, body)
    consumer = Consumer([fetched_before_pause, _revoke_partition_0])
    intake = _intake(tmp_path, consumer, accept, monkeypatch)
    intake._take(Message(0, 0, body))  # kept
    intake._take(Message(0, 1, body))  # held: paused, then its partition is revoked
    assert len(taken) == 1 and intake.taken == 1
    assert consumer.calls == [
        ("pause", [0, 1]),  # every assigned partition
        ("pause", [0, 1]),  # again after each poll (partitions assigned meanwhile too)
        ("seek", (1, 7)),  # a message fetched before the pause: read again later
        ("commit", [(0, 1)]),  # at the revoke: what was kept, not the held message (offset 1)
        ("pause", [1]),
        ("resume", [1]),  # the held message given up: consumption goes on
    ]
    assert intake._offsets.all_committable() == {} and intake.pauses == 1  # partition 0 forgotten


def test_a_bad_message_is_dead_lettered_and_its_offset_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted: list[str] = []
    consumer = Consumer([])
    intake = _intake(tmp_path, consumer, lambda text, event: accepted.append(text), monkeypatch)
    intake._take(Message(1, 4, b'{"eventType": "START", "x": NaN}'))
    intake._take(Message(1, 5, json.dumps(_event("r2")).encode()))
    intake._commit()
    assert len(accepted) == 1 and intake.dead_lettered == 1
    assert consumer.calls == [("commit", [(1, 6)])]
    assert intake._spool.dead_letters() == []  # a record of its own, never a dead letter
    (bad,) = intake._spool.bad_messages()
    assert (bad.source, bad.offset, bad.where) == ("kafka:t/1", 4, "kafka:t/1@4")
    assert "t[1]@4 is not an event: body is not JSON" in bad.reason
    assert bad.head == b'{"eventType": "START", "x": NaN}' and bad.size == len(bad.head)


def test_a_batch_is_kept_at_once_and_taken_one_at_a_time_when_it_cannot_be(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lineage_quality.producer.spool import SpoolFullError

    batches: list[list[str]] = []
    full = {"now": False}

    def accept_many(items: list[tuple[str, Any]]) -> bool:
        if full["now"]:
            raise SpoolFullError("spool full")  # all or none: none kept
        batches.append([json.loads(text)["run"]["runId"] for text, _ in items])
        return True

    accepted: list[str] = []
    consumer = Consumer([])
    intake = _intake(
        tmp_path, consumer, lambda t, e: accepted.append(json.loads(t)["run"]["runId"]),
        monkeypatch, accept_many,
    )  # fmt: skip

    def message(partition: int, offset: int) -> Message:
        return Message(partition, offset, json.dumps(_event(f"r{offset}")).encode())

    intake._take_all([message(0, 3), message(1, 8), message(0, 4)])
    assert batches == [["r3", "r8", "r4"]] and accepted == []  # one call: one spool commit
    intake._commit()
    assert consumer.calls == [("commit", [(0, 5), (1, 9)])]
    # a message that is not an event: the batch taken one at a time, in order, nothing twice
    bad = Message(0, 6, b"not json")
    intake._take_all([message(0, 5), bad, message(1, 9)])
    assert batches == [["r3", "r8", "r4"]] and accepted == ["r5", "r9"]
    assert intake.dead_lettered == 1
    # the spool refuses the batch: one at a time (the path that pauses and waits for room)
    full["now"] = True
    intake._take_all([message(0, 7), message(1, 10)])
    assert accepted == ["r5", "r9", "r7", "r10"]
    intake._commit()
    assert consumer.calls[-1] == ("commit", [(0, 8), (1, 11)])
    assert intake.taken == 7


def test_a_batch_drops_the_messages_of_a_partition_revoked_while_it_was_fetched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batches: list[list[tuple[str, Any]]] = []
    consumer = Consumer([])
    intake = _intake(
        tmp_path, consumer, lambda t, e: None, monkeypatch, lambda b: batches.append(b) or True
    )
    body = json.dumps(_event("r1")).encode()
    intake._gone = set()
    _revoke_partition_0(consumer)  # as librdkafka runs it inside the `consume` of the batch
    fetched = [Message(0, 3, body), Message(1, 8, body), Message(0, 4, body), Message(1, 9, body)]
    intake._take_all(fetched)
    intake._commit()
    assert len(batches) == 1 and len(batches[0]) == 2  # partition 1's only
    assert consumer.calls == [("commit", [(1, 10)])]  # nothing for partition 0: not ours


def test_with_the_relay_offsets_are_committed_up_to_the_first_event_not_acknowledged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kafka in relaying to Kafka out (kafka/relay.py): a START relayed, the run's next event
    out behind it, a FAIL spooled, a bad message recorded; each partition's commit stops at
    its first event Kafka out has not acknowledged, and moves on with the acknowledgements."""
    from lineage_quality.producer.intake import Intake
    from lineage_quality.producer.kafka import consumer as consumer_module
    from lineage_quality.producer.kafka.offsets import Offsets
    from lineage_quality.producer.kafka.relay import Relay
    from lineage_quality.producer.metrics import Metrics
    from lineage_quality.producer.write_through import SinkLatency, WriteThrough

    class Sink:
        pipelined = True

        def __init__(self) -> None:
            self.told: list[tuple[str, Any]] = []

        def produce(self, text: str, key: str | None, told: Any) -> None:
            self.told.append((json.loads(text)["eventType"], told))

    def event(run: str, event_type: str) -> bytes:
        return json.dumps({**_event(run), "eventType": event_type, "outputs": []}).encode()

    spool = Spool(tmp_path / "spool.db")
    sink = Sink()
    intake = Intake(spool, Evaluator(), WriteThrough(None, SinkLatency(1.0), None, 1.0),
                    Metrics(), lambda name: None)  # fmt: skip
    relay = Relay(sink, intake, Offsets(), limit=10)
    consumer = Consumer([])
    monkeypatch.setattr(consumer_module.KafkaIntake, "_new_consumer", lambda self: consumer)
    kafka_in = consumer_module.KafkaIntake(
        Settings.of(kafka_bootstrap_servers="b:1", kafka_topics="t"), lambda t, e: None, spool,
        relay=relay,
    )  # fmt: skip
    kafka_in._take_all([
        Message(0, 0, event("a", "START")), Message(0, 1, event("a", "RUNNING")),
        Message(1, 0, event("b", "FAIL")), Message(0, 2, b"not json"),
        Message(1, 1, event("c", "START")),
    ])  # fmt: skip
    assert [kind for kind, _ in sink.told] == ["START", "RUNNING", "START"]
    assert spool.pending() == 1
    assert kafka_in.taken == 4 and kafka_in.dead_lettered == 1
    kafka_in._commit()
    assert consumer.calls == [("commit", [(0, 0), (1, 1)])]  # a's START, c's START: out
    sink.told[0][1](None)  # a's START acknowledged, its RUNNING still out
    sink.told[2][1](None)
    relay.pump()
    kafka_in._commit()
    assert consumer.calls[-1] == ("commit", [(0, 1), (1, 2)])
    sink.told[1][1](None)
    relay.pump()
    kafka_in._commit()
    assert consumer.calls[-1] == ("commit", [(0, 3)])  # past the bad message too
    spool.close()

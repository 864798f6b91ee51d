"""Kafka messages that are not events never push a dead letter out, nor swell the spool (issue
49.1), with a real broker.

A dead letter -- an event the sink refused for good, which exists nowhere else -- is in the
spool first. Then two messages over `--max-body-bytes` and one of binary garbage (not UTF-8)
come, each close to Kafka's 1 MB default: before, each was kept whole among the dead letters (the
garbage as `\\xNN` text, four times its size), so that two of them pushed the dead letter out of
a 1 MiB `--dead-letter-max-bytes` and the spool grew by several MB. Now each is a record of a few
KiB (its first bytes, size, SHA-256, topic/partition/offset, reason), bounded by count on its
own (`--kafka-bad-messages-max`, 2 here: the oldest record expires), and the dead letter stays.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
from pathlib import Path

import pytest
from kafka_broker import KafkaBroker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
from faultkit import RecordingSink, make_event
from kafkakit import committed, end_offsets, kafka_serve, produce, wait_until

from lineage_quality.cli import main
from lineage_quality.producer import Spool

pytestmark = pytest.mark.kafka
KEEP = 4096


def _count(path: Path, table: str) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def _spool_bytes(folder: Path, name: str) -> int:
    """The spool's files on disk: the database, its WAL and shared memory."""
    return sum(p.stat().st_size for p in folder.glob(f"{name}*") if p.is_file())


def test_bad_messages_never_evict_a_dead_letter_and_the_spool_stays_small(
    running_broker: KafkaBroker, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic, group = "lineage-in-poison", "lq-poison"
    running_broker.create_topic(topic, partitions=1)
    refused, after = make_event(0, 0), make_event(1, 0)
    oversized = [
        b'{"eventType": "COMPLETE", "pad": "' + bytes([c]) * 900_000 + b'"}' for c in b"ab"
    ]
    garbage = b"\xff" * 250_000  # under --max-body-bytes, not UTF-8
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    sink = RecordingSink()
    sink.refuse = lambda event: 400 if event["job"]["name"] == "job_0" else None
    serve = kafka_serve(
        running_broker, topic, group, tmp_path, sink, contracts,
        ["--max-body-bytes", "300000", "--dead-letter-after", "1",
         "--dead-letter-max-bytes", str(1024 * 1024), "--kafka-bad-messages-max", "2",
         "--write-through-below", "0"],
    )  # fmt: skip
    spool_path = tmp_path / "serve.spool.db"
    try:
        produce(running_broker, topic, [refused])
        assert wait_until(lambda: _count(spool_path, "dead_letters") == 1, 60)
        before = _spool_bytes(tmp_path, "serve.spool.db")
        produce(running_broker, topic, [*oversized, garbage, after])
        assert sink.wait_for(lambda s: len(s.events) == 1, 60), serve.log_path.read_text()[-3000:]
        end = end_offsets(running_broker, topic, 1)
        assert wait_until(lambda: committed(running_broker, group, topic, 1) == end, 30)
        grown = _spool_bytes(tmp_path, "serve.spool.db") - before
    finally:
        serve.stop()
        sink.close()
    received = sum(len(m) for m in [*oversized, garbage])
    with capsys.disabled():
        print(f"\nbad messages received {received} bytes; the spool grew {grown} bytes for them")
    # the heads (3 x 4 KiB) and the pages of their transactions in the WAL, not the messages
    assert grown < 256 * 1024, grown
    spool = Spool(spool_path)
    try:
        (letter,) = spool.dead_letters()  # the refused event: still there
        bad = spool.bad_messages()
    finally:
        spool.close()
    assert json.loads(letter.body)["job"]["name"] == "job_0"
    # three bad messages, the oldest expired past --kafka-bad-messages-max 2
    assert [(b.source, b.offset, b.size) for b in bad] == [
        (f"kafka:{topic}/0", 2, len(oversized[1])),
        (f"kafka:{topic}/0", 3, len(garbage)),
    ]
    assert bad[0].sha256 == hashlib.sha256(oversized[1]).hexdigest()
    assert bad[0].head == oversized[1][:KEEP] and bad[1].head == garbage[:KEEP]
    assert "over --max-body-bytes 300000" in bad[0].reason and "utf-8" in bad[1].reason
    assert "1 record(s) of bad messages expired" in serve.log_path.read_text()

    # what an operator sees: both kinds listed; a bad message shown bounded, never retried
    capsys.readouterr()
    assert main(["dead-letters", "list", "--spool", str(spool_path)]) == 0
    listed = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [(int(row[0]), row[2]) for row in listed] == [
        (letter.id, letter.lane), (bad[0].id, f"kafka:{topic}/0@2"),
        (bad[1].id, f"kafka:{topic}/0@3"),
    ]  # fmt: skip
    assert main(["dead-letters", "show", str(bad[1].id), "--spool", str(spool_path)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["size"] == len(garbage) and shown["kept"] == KEEP and "headBase64" in shown
    assert main(["dead-letters", "retry", str(bad[1].id), "--spool", str(spool_path)]) == 2
    assert "not events, kept as records" in capsys.readouterr().err

"""Streaming micro-batches (issue 51.3), pure: which files a batch added (a file sink's log, a
compacted one, a Delta sink's commit), what a judged group says, and batches merged (never
skipped) while the producer is still evaluating the previous ones. The real queries:
tests/e2e/test_streaming_e2e.py."""

from __future__ import annotations

import json
import threading
import types
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.contracts import BoundRules, DatasetPattern
from lineage_quality.driver.streaming import StreamWatch, sink_of
from lineage_quality.errors import DatasetError
from lineage_quality.evaluation.batches import (
    FACET,
    BatchFiles,
    batch_files,
    delta_sink_files,
    file_sink_files,
)
from lineage_quality.evaluation.storage import StoredFile
from lineage_quality.kinds import RuleKind
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.refs import DatasetRef


def _lines(files: dict[str, list[str]]) -> Any:
    return files.get


def _log(*entries: tuple[str, int, int]) -> list[str]:
    rows = [{"path": p, "size": s, "modificationTime": m, "action": "add"} for p, s, m in entries]
    return ["v1", *(json.dumps(r) for r in rows)]


def test_a_file_sink_batch_is_its_log_and_a_compacted_log_less_the_earlier_ones() -> None:
    logs = {
        "/s/_spark_metadata/0": _log(("file:///s/a.parquet", 1, 10)),
        "/s/_spark_metadata/1": _log(("file:///s/b%20c.parquet", 2, 20)),
        "/s/_spark_metadata/2.compact": _log(
            ("file:///s/a.parquet", 1, 10), ("file:///s/b%20c.parquet", 2, 20), ("/s/d", 3, 30)
        ),
    }
    assert file_sink_files("/s", 0, _lines(logs)) == [("/s/a.parquet", 1, 10)]
    assert file_sink_files("/s/", 1, _lines(logs)) == [("/s/b c.parquet", 2, 20)]
    assert file_sink_files("/s", 2, _lines(logs)) == [("/s/d", 3, 30)]
    assert file_sink_files("/s", 3, _lines(logs)) is None  # no log: not found


def test_a_delta_sink_batch_is_the_commit_naming_it() -> None:
    def commit(app: str, version: int, *paths: str) -> list[str]:
        adds = [{"add": {"path": p, "size": 1}} for p in paths]
        return [json.dumps(a) for a in [{"txn": {"appId": app, "version": version}}, *adds]]

    logs = {
        "/t/_delta_log/00000000000000000000.json": commit("q", 0, "a.parquet"),
        "/t/_delta_log/00000000000000000001.json": commit("other", 0, "x.parquet"),
        "/t/_delta_log/00000000000000000002.json": commit("q", 1, "k%3D1/b.parquet", "c.parquet"),
    }
    sizes = {"/t/a.parquet": (5, 50), "/t/k=1/b.parquet": (6, 60), "/t/c.parquet": (7, 70)}
    found = delta_sink_files("/t", "q", 1, _lines(logs), sizes.get, latest=2)
    assert found == [("/t/k=1/b.parquet", 6, 60), ("/t/c.parquet", 7, 70)]
    assert delta_sink_files("/t", "q", 0, _lines(logs), sizes.get, 2) == [("/t/a.parquet", 5, 50)]
    assert delta_sink_files("/t", "q", 2, _lines(logs), sizes.get, 2) is None
    assert delta_sink_files("/t", "q", 1, _lines(logs), lambda _: None, 2) is None  # file gone


def test_batches_read_only_their_files_and_say_which_batches() -> None:
    judged = BatchFiles("q", (3, 4, 5, 8), (("/s/b", 2, 20), ("/s/c", 3, 30)))
    listing = [StoredFile(p, p[2:], s, m) for p, s, m in (("/s/a", 1, 10), *judged.files)]
    left = judged.left(1000, listing)
    assert [f.path for f in left.kept] == ["/s/b", "/s/c"] and [f.path for f in left.later] == [
        "/s/a"
    ]
    assert judged.ranges() == "3-5, 8"
    assert "micro-batches 3-5, 8 of streaming query q" in judged.describe()
    assert "judged together" in judged.describe()
    changed = [StoredFile("/s/b", "b", 2, 21), StoredFile("/s/c", "c", 3, 30)]
    with pytest.raises(DatasetError, match="changed"):
        judged.left(1000, changed)
    with pytest.raises(DatasetError, match="gone"):
        judged.left(1000, listing[:2])


def test_the_facet_of_a_batch_event_is_read_back_or_refused() -> None:
    ref = DatasetRef("outputs", 0, "file", "/s")
    facet = {"query": "q", "batches": [1, 2], "files": [["/s/b", 2, 20]]}
    event = {"outputs": [{"namespace": "file", "name": "/s", "facets": {FACET: facet}}]}
    assert batch_files(event, ref) == BatchFiles("q", (1, 2), (("/s/b", 2, 20),))
    assert batch_files(event, DatasetRef("inputs", 0, "file", "/s")) is None
    event["outputs"][0]["facets"][FACET] = {"query": "q", "batches": [], "files": []}
    with pytest.raises(DatasetError, match="no batch"):
        batch_files(event, ref)


def _progress(batch: int, location: str, rows: int = 10) -> Any:
    return types.SimpleNamespace(
        id="qid",
        name="q",
        batchId=batch,
        numInputRows=rows,
        sink=types.SimpleNamespace(description=f"FileSink[{location}]"),
    )


def test_batches_arriving_during_an_evaluation_are_merged_never_skipped(tmp_path: Path) -> None:
    sink = tmp_path / "sink"
    (sink / "_spark_metadata").mkdir(parents=True)
    for b in range(4):
        data = sink / f"part-{b}.parquet"
        data.write_bytes(b"x" * (b + 1))
        (sink / "_spark_metadata" / str(b)).write_text(
            "\n".join(_log((f"file://{data}", b + 1, 1000 + b)))
        )
    rule = Rule("rows", RuleKind.ROW_COUNT, Threshold(Operator.GREATER_THAN, 0))
    bound = BoundRules("c", "sink", (DatasetPattern("file", str(sink)),), (rule,))
    given: list[dict[str, Any]] = []
    evaluating = threading.Event()
    release = threading.Event()

    def idle(timeout: float) -> bool:  # the producer: busy with the first batch until released
        evaluating.set()
        release.wait(10)
        return True

    watch = StreamWatch([bound], lambda body: given.append(json.loads(body)), idle, "ns")
    watch.spark = object()
    threading.Thread(target=watch._run, daemon=True).start()
    watch.offer(_progress(0, str(sink)))
    assert evaluating.wait(10)
    for b in (1, 2, 3):  # the query goes on meanwhile
        watch.offer(_progress(b, str(sink)))
    watch.offer(_progress(4, str(sink), rows=0))  # read nothing: nothing written to judge
    watch.offer(_progress(5, str(tmp_path / "unbound")))  # no contract binds it
    release.set()
    watch.flush(10)
    watch.stop()
    assert watch.sent == [(0,), (1, 2, 3)]
    facets = [e["outputs"][0]["facets"][FACET] for e in given]
    assert [f["batches"] for f in facets] == [[0], [1, 2, 3]]
    assert [len(f["files"]) for f in facets] == [1, 3]
    assert given[1]["job"]["name"] == "q.micro_batches"
    assert given[1]["outputs"][0]["name"] == str(sink)


def test_sinks_are_told_by_their_description() -> None:
    assert sink_of("FileSink[s3a://b/p]") == ("FileSink", "s3a://b/p")
    assert sink_of("DeltaSink[/t]") == ("DeltaSink", "/t")
    assert sink_of("ForeachBatchSink") is None

"""The in-driver upstream guard's health file (issue 39, `attach(..., upstream="block")`): which
locations and tables a dataset is read at, the refusal's text (dataset, rule, run, made safe for
a line of the file), and the file kept in step with the lineage store as writes fail, are
marked, and heal (the engine jar's check rule reads it; tests/e2e/test_in_driver_upstream_block.py
runs the whole under spark-submit)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from lineage_quality.driver.upstream_guard import UpstreamGuard
from lineage_quality.engine import verdict
from lineage_quality.kinds import RuleKind
from lineage_quality.lineage import Failure, Upstream, observe, open_lineage
from lineage_quality.lineage.guard import lines, locations, message
from lineage_quality.lineage.model import Write
from lineage_quality.lineage.store import LineageStore
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.event import datasets_of

NOT_NULL = Rule(
    id="raw.customer_id.not_null",
    kind=RuleKind.NULL_VALUES,
    columns=["customer_id"],
    threshold=Threshold(Operator.MUST_BE, 0),
    name="customer_id_not_null",
)


def test_a_dataset_is_read_at_its_location() -> None:
    assert locations("file:/lake/raw") == ["file:/lake/raw"]
    assert locations("s3://bucket:lake/raw") == ["s3://bucket/lake/raw"]
    assert locations("hdfs://nn:8020:/lake/raw") == ["hdfs://nn:8020/lake/raw"]
    assert locations("gs://b:x/y") == ["gs://b/x/y"]
    # names that are no location: a metastore's table, a logical name, a bare bucket
    assert locations("hive://metastore:9083:sales.orders") == []
    assert locations("warehouse:orders") == []
    assert locations("s3://bucket:") == []


def test_the_refusal_names_dataset_rule_and_run_on_one_safe_line() -> None:
    write = Write(
        "file:/lake/r\taw\nx",
        "run-1",
        0,
        version="7",
        evaluated=True,
        failures=(Failure("nn", "ALERT", "FAILED", "customer_id"), Failure("k", "LOG", "ERROR")),
        tables=("Sales.Orders",),
    )
    text = message(write)
    assert "rule nn on customer_id FAILED (ALERT) (and 1 more)" in text
    assert "write of run run-1 at 1970-01-01T00:00:00+00:00, version 7" in text
    found = lines([write])
    assert [line.split("\t")[:2] for line in found] == [
        ["path", "file:/lake/r aw x"],
        ["table", "sales.orders"],
    ]
    assert all(line.count("\t") == 2 and "\n" not in line for line in found)


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + ".000Z"


def _keep(store: LineageStore, run: str, at: int, inputs: list[str], output: str,
          failing: int | None = None) -> None:  # fmt: skip
    event: dict[str, Any] = {
        "eventType": "COMPLETE",
        "eventTime": _iso(at),
        "run": {"runId": run},
        "job": {"namespace": "spark", "name": run},
        "inputs": [{"namespace": "file", "name": n} for n in inputs],
        "outputs": [{"namespace": "file", "name": output}],
    }
    out = next(r for r in datasets_of(event) if r.role == "outputs")
    results = {} if failing is None else {out: [verdict(NOT_NULL, failing, 10)]}
    store.record(observe(event, results, store.written, Upstream.WARN, store.bounds.max_marks))


def _refused(path: Path) -> dict[str, str]:
    rows = [line.split("\t") for line in path.read_text().splitlines()[1:]]
    return {location: text for kind, location, text in rows if kind == "path"}


def test_the_file_follows_the_store(tmp_path: Path) -> None:
    store = open_lineage(tmp_path / "history.db")
    guard = UpstreamGuard(store, tmp_path / "guard", refresh_seconds=60)
    now = int(time.time() * 1000)
    guard.refresh()
    assert _refused(tmp_path / "guard") == {}  # written before anything: the rule needs it

    _keep(store, "r1", now - 5000, [], "/lake/raw", failing=3)
    _keep(store, "c1", now - 4000, ["/lake/raw"], "/lake/clean")  # marked from raw
    _keep(store, "o1", now - 4000, [], "/lake/other", failing=0)
    guard.refresh()
    refused = _refused(tmp_path / "guard")
    assert set(refused) == {"file:/lake/raw", "file:/lake/clean"}
    assert "run r1" in refused["file:/lake/raw"] and "customer_id_not_null" in refused[
        "file:/lake/raw"]  # fmt: skip
    assert "marked: upstream file:/lake/raw" in refused["file:/lake/clean"]
    assert guard.unhealthy() == ["file:/lake/clean", "file:/lake/raw"]

    _keep(store, "r2", now - 3000, [], "/lake/raw", failing=0)  # raw healthy again
    guard.refresh()
    assert set(_refused(tmp_path / "guard")) == {"file:/lake/clean"}
    _keep(store, "c2", now - 2000, ["/lake/raw"], "/lake/clean")  # rebuilt from healthy raw
    guard.refresh()
    assert _refused(tmp_path / "guard") == {}
    guard.stop()
    assert not (tmp_path / "guard").exists()
    store.close()


def test_an_unreadable_store_keeps_the_last_file(tmp_path: Path) -> None:
    store = open_lineage(tmp_path / "history.db")
    _keep(store, "r1", int(time.time() * 1000) - 1000, [], "/lake/raw", failing=3)
    guard = UpstreamGuard(store, tmp_path / "guard", refresh_seconds=60)
    guard.refresh()
    store.close()  # every read fails from now on
    guard.refresh()
    assert set(_refused(tmp_path / "guard")) == {"file:/lake/raw"}


def test_a_name_from_an_event_cannot_write_to_the_jobs_terminal() -> None:
    write = Write(
        "file:/lake/\x1b]0;owned\x07raw\x9b2J",
        "run-\u2028x",
        0,
        evaluated=True,
        failures=(Failure("r\x1b[31m", "BLOCK", "FAILED"),),
    )
    (line,) = lines([write])
    kind, location, text = line.split("\t")
    assert (kind, location) == ("path", "file:/lake/ ]0;owned raw\x9b2J")
    assert not any(c in text for c in "\x1b\x07\x9b\u2028")
    assert "rule r" in text and "write of run run-" in text

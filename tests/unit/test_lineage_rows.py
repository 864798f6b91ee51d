"""The exact text the lineage store keeps for a COMPLETE (issue 52: its rows are built faster;
what they hold must not move): the state and column lineage as `json.dumps(...,
ensure_ascii=False)` writes them, each row's byte size in UTF-8 (non-ASCII names counted by
their bytes), the column lineage past its bound said `truncated`, and the column lineage read
from the facet field by field (malformed fields left out, DIRECT or no transformation: direct)."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.engine import verdict
from lineage_quality.kinds import RuleKind
from lineage_quality.lineage import Upstream, observe, open_lineage
from lineage_quality.lineage import store as lineage_store
from lineage_quality.lineage.model import as_json
from lineage_quality.lineage.step import Observed
from lineage_quality.lineage.store import LineageStore
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.event import datasets_of

NOW = int(time.time() * 1000)
RAW = "/données/brut"  # non-ASCII: its bytes, not its characters, count toward the bounds
RULE = Rule(
    id="raw.id.not_null",
    kind=RuleKind.NULL_VALUES,
    columns=["id"],
    threshold=Threshold(Operator.MUST_BE, 0),
    name="id_not_null",
)


def _field(name: str, field: str, *kinds: str) -> dict[str, Any]:
    doc: dict[str, Any] = {"namespace": "file", "name": name, "field": field}
    if kinds:
        doc["transformations"] = [{"type": k, "subtype": "IDENTITY"} for k in kinds]
    return doc


COLUMN_LINEAGE = {
    "fields": {
        "id": {"inputFields": [_field(RAW, "id", "DIRECT")]},
        "prénom": {"inputFields": [_field(RAW, "prénom")]},  # no transformations: direct
        "total": {"inputFields": [_field(RAW, "montant", "INDIRECT", "DIRECT")]},
        "pays": {"inputFields": [_field(RAW, "pays", "INDIRECT"), {"name": "no namespace"}]},
        "skipped": {"inputFields": "not a list"},
    },
    "dataset": [_field("/ref/pays", "code", "INDIRECT"), "not an object"],
}


def _event(run: str, at: int, inputs: list[str], output: str, facets: dict[str, Any]) -> Any:
    return {
        "eventType": "COMPLETE",
        "eventTime": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at / 1000)) + ".000Z",
        "run": {"runId": run},
        "job": {"namespace": "spark", "name": f"job-{run}"},
        "inputs": [{"namespace": "file", "name": n} for n in inputs],
        "outputs": [{"namespace": "file", "name": output, "facets": facets}],
    }


def _keep(store: LineageStore, event: Any, failing: int | None = None) -> Observed:
    out = next(r for r in datasets_of(event) if r.role == "outputs")
    results = {} if failing is None else {out: [verdict(RULE, failing, 10)]}
    observed = observe(event, results, store.written, Upstream.BLOCK, store.bounds.max_marks)
    store.record(observed)
    return observed


def _rows(path: Path, table: str) -> dict[str, tuple[Any, ...]]:
    with sqlite3.connect(path) as db:
        found = db.execute(f"SELECT * FROM {table}").fetchall()
    return {f"{r[0]}|{r[1]}" if table.endswith("writes") else f"{r[0]}|{r[2]}": r for r in found}


def _size(*texts: str | None) -> int:
    return lineage_store.ROW_OVERHEAD + sum(len((t or "").encode("utf-8")) for t in texts)


def test_the_rows_kept_hold_exactly_the_json_and_sizes_of_a_complete(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    store = open_lineage(path)
    raw = _keep(store, _event("raw-1", NOW - 60_000, [], RAW, {}), failing=3)
    clean = _keep(
        store, _event("clean-1", NOW, [RAW], "/données/propre", {"columnLineage": COLUMN_LINEAGE})
    )
    store.close()
    writes, edges = _rows(path, "lq_lineage_writes"), _rows(path, "lq_lineage_edges")
    # the failing write, and the marked one: their state as json.dumps writes it
    for observed in (raw, clean):
        (write,) = observed.writes
        state = json.dumps(
            {
                "failures": [as_json(f) for f in write.failures],
                "marks": [as_json(m) for m in write.marks],
            },
            ensure_ascii=False,
        )
        assert state != '{"failures": [], "marks": []}'  # both say something
        row = writes[f"{write.dataset}|{write.run}"]
        assert row[5] == state
        assert row[8] == _size(write.dataset, write.run, None, state, None)
    # the clean output's column lineage, field by field, as json.dumps writes it
    columns = json.dumps(
        {
            "columns": {
                "id": [[f"file:{RAW}", "id", True]],
                "prénom": [[f"file:{RAW}", "prénom", True]],
                "total": [[f"file:{RAW}", "montant", True]],
                "pays": [[f"file:{RAW}", "pays", False]],
            },
            "sources": ["file:/ref/pays"],
        },
        ensure_ascii=False,
    )
    edge = edges["clean-1|file:/données/propre"]
    assert edge[6] == columns
    assert edge[8] == _size("clean-1", "outputs", "file:/données/propre", "spark/job-clean-1",
                            None, columns)  # fmt: skip
    read = edges[f"clean-1|file:{RAW}"]
    assert read[6] is None and read[8] == _size("clean-1", "inputs", f"file:{RAW}",
                                                "spark/job-clean-1")  # fmt: skip


def test_a_clean_write_keeps_the_clean_state(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    store = open_lineage(path)
    _keep(store, _event("ok-1", NOW, [], "/ok", {}), failing=0)
    store.close()
    (row,) = _rows(path, "lq_lineage_writes").values()
    assert row[4] == 1  # evaluated
    assert row[5] == json.dumps({"failures": [], "marks": []}, ensure_ascii=False)
    assert row[8] == _size("file:/ok", "ok-1", None, row[5], None)


def test_column_lineage_past_its_bound_is_said_truncated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lineage_store, "MAX_COLUMNS_BYTES", 100)
    path = tmp_path / "history.db"
    store = open_lineage(path)
    _keep(store, _event("wide-1", NOW, [RAW], "/wide", {"columnLineage": COLUMN_LINEAGE}))
    store.close()
    edge = _rows(path, "lq_lineage_edges")["wide-1|file:/wide"]
    assert edge[6] == '{"truncated": true}'

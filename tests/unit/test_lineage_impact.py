"""`impact` (issue 39), without Spark: the 3-hop pipeline of test_lineage_propagation.py (raw ->
clean -> agg, and a branch raw -> countries reading only healthy columns of raw) kept in a real
SQLite lineage store as serve keeps it; the walk from raw's failing write finds clean and agg
with exactly their marked columns, counts countries as a reader only, stops at a healthy write,
and the command prints it as a table, JSON and an HTML page inert against names from events."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_lineage_propagation import (
    AGG,
    CLEAN,
    COUNTRIES,
    NOT_NULL,
    RAW,
    _event,
    _out,
    run_agg,
    run_clean,
    run_countries,
    write_raw,
)

from lineage_quality.cli.main import main
from lineage_quality.engine import verdict
from lineage_quality.lineage import Upstream, observe, open_lineage
from lineage_quality.lineage.impact import failing_write, walk
from lineage_quality.lineage.impact_html import impact_html
from lineage_quality.lineage.store import LineageStore


def _keep(store: LineageStore, event: dict[str, Any], nulls: int | None = None) -> None:
    results = {} if nulls is None else {_out(event): [verdict(NOT_NULL, nulls, 10)]}
    store.record(observe(event, results, store.written, Upstream.WARN))


def _pipeline(where: Path) -> LineageStore:
    """raw fails (3 nulls of 10), clean, agg and countries run on it; then raw is fixed and
    clean runs again (a healthy write, not downstream of the failing one)."""
    store = open_lineage(where)
    _keep(store, write_raw("raw-1", 0), nulls=3)
    _keep(store, run_clean("clean-1", 1))
    _keep(store, run_agg("agg-1", 2))
    _keep(store, run_countries("countries-1", 3))
    _keep(store, write_raw("raw-2", 10), nulls=0)
    _keep(store, run_clean("clean-2", 11))
    _keep(store, run_agg("agg-2", 12))
    return store


def test_the_walk_finds_the_two_downstream_datasets_and_their_columns(tmp_path: Path) -> None:
    store = _pipeline(tmp_path / "history.db")
    start = failing_write(store.writes("file:" + RAW))
    assert start is not None and start.run == "raw-1"  # raw-2 is healthy: not the failing one
    impact = walk(start, store)
    assert [(h.dataset, h.run, h.source, h.depth, h.columns) for h in impact.hops] == [
        ("file:" + CLEAN, "clean-1", "file:" + RAW, 1, ("customer_id",)),
        ("file:" + AGG, "agg-1", "file:" + CLEAN, 2, ("customer_id",)),
    ]
    assert impact.datasets == {"file:" + CLEAN: ("customer_id",), "file:" + AGG: ("customer_id",)}
    # countries read the failing write, on healthy columns only: a reader, not affected
    assert set(impact.readers) == {"file:" + CLEAN, "file:" + AGG, "file:" + COUNTRIES}
    assert [(o.dataset, o.rule, o.run, o.column) for o in impact.origins] == [
        ("file:" + RAW, "customer_id_not_null", "raw-1", "customer_id")
    ]
    # the healthy write of raw has no impact: clean-2 read it, agg-2 read clean-2
    healthy = store.write_of("file:" + RAW, "raw-2")
    assert healthy is not None and walk(healthy, store).hops == ()
    store.close()


def test_a_dataset_level_failure_marks_whole_datasets_and_the_walk_is_bounded(
    tmp_path: Path,
) -> None:
    store = open_lineage(tmp_path / "history.db")
    raw = write_raw("raw-1", 0)
    _keep(store, raw, nulls=3)
    # clean without column lineage: the whole of it is marked
    _keep(store, _event("clean-1", 1, [RAW], {CLEAN: None}))
    _keep(store, run_agg("agg-1", 2))
    start = store.write_of("file:" + RAW, "raw-1")
    assert start is not None
    impact = walk(start, store)
    assert impact.datasets == {"file:" + CLEAN: (None,), "file:" + AGG: (None,)}
    bounded = walk(start, store, max_writes=1)
    assert [h.dataset for h in bounded.hops] == ["file:" + CLEAN] and bounded.truncated
    store.close()


def _impact(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["impact", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_command_prints_a_table_json_and_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = tmp_path / "history.db"
    _pipeline(where).close()
    history = ["--history", str(where)]

    code, out, _ = _impact(capsys, "--dataset", RAW, *history)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("file:/lake/raw: write of run raw-1 at ")
    assert "rule customer_id_not_null on customer_id FAILED (ALERT)" in lines[0]
    assert lines[1].split() == ["DEPTH", "DATASET", "COLUMNS", "RUN", "JOB", "FROM"]
    assert lines[2].split() == ["1", "file:/lake/clean", "customer_id", "clean-1", "spark/clean",
                                "file:/lake/raw"]  # fmt: skip
    assert lines[3].split() == ["2", "file:/lake/agg", "customer_id", "agg-1", "spark/agg",
                                "file:/lake/clean"]  # fmt: skip
    assert lines[4] == (
        "2 downstream dataset(s) affected; 1 more read it without an affected column"
    )

    code, out, _ = _impact(capsys, "--dataset", "file:" + RAW, "--output", "json", *history)
    doc = json.loads(out)
    assert code == 0 and doc["dataset"] == "file:/lake/raw" and doc["write"]["run"] == "raw-1"
    assert doc["datasets"] == [
        {"dataset": "file:/lake/clean", "wholeDataset": False, "columns": ["customer_id"]},
        {"dataset": "file:/lake/agg", "wholeDataset": False, "columns": ["customer_id"]},
    ]
    assert [(r["run"], r["from"], r["depth"]) for r in doc["runs"]] == [
        ("clean-1", "file:/lake/raw", 1),
        ("agg-1", "file:/lake/clean", 2),
    ]
    assert sorted(doc["readers"]) == ["file:/lake/agg", "file:/lake/clean", "file:/lake/countries"]

    # --run: the write of that run (the healthy one: nothing downstream)
    code, out, _ = _impact(capsys, "--dataset", RAW, "--run", "raw-2", "--output", "json", *history)
    assert code == 0 and json.loads(out)["datasets"] == []

    code, out, _ = _impact(capsys, "--dataset", RAW, "--output", "html", *history)
    assert code == 0 and out.startswith("<!DOCTYPE html>") and "<svg" in out
    assert out.count('class="node"') == 3  # raw, clean, agg
    assert "<script" not in out


def test_the_command_exits_2_with_one_line_for_what_it_cannot_show(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = tmp_path / "history.db"
    _pipeline(where).close()
    code, out, err = _impact(capsys, "--dataset", "/lake/never", "--history", str(where))
    assert (code, out) == (2, "")
    assert err == "lineage-quality impact: /lake/never: unknown dataset (no write of it is kept)\n"
    code, _, err = _impact(capsys, "--dataset", RAW, "--run", "nope", "--history", str(where))
    assert code == 2 and err.count("\n") == 1 and "no write of it by run nope" in err
    code, _, err = _impact(capsys, "--dataset", RAW, "--history", str(tmp_path / "none.db"))
    assert code == 2 and err.startswith("lineage-quality impact: no history store at ")
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database" * 100)
    code, _, err = _impact(capsys, "--dataset", RAW, "--history", str(garbage))
    assert code == 2 and err.startswith("lineage-quality impact: cannot read the history store")
    assert err.count("\n") == 1
    # a healthy dataset: nothing to show, exit 0
    code, out, _ = _impact(capsys, "--dataset", COUNTRIES, "--history", str(where))
    assert code == 0 and "no failing write" in out


HOSTILE = [
    "</text><script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "' onmouseover='alert(1)",
    "<!--",
    "]]><svg onload=alert(1)>",
]


def test_the_html_is_inert_against_names_from_events(tmp_path: Path) -> None:
    store = open_lineage(tmp_path / "history.db")
    raw = f"/lake/{HOSTILE[0]}"
    column = HOSTILE[1]
    down = f"/lake/{HOSTILE[2]}{HOSTILE[3]}{HOSTILE[4]}"
    failing = _event("raw-<b>1</b>", 0, [], {raw: None})
    rule = NOT_NULL.__class__(
        id="x", kind=NOT_NULL.kind, columns=[column], threshold=NOT_NULL.threshold,
        name=HOSTILE[4],
    )  # fmt: skip
    store.record(observe(failing, {_out(failing): [verdict(rule, 3, 10)]}, store.written))
    fields = {"c": [{"namespace": "file", "name": raw, "field": column}]}
    store.record(observe(_event('job"<x>-1', 1, [raw], {down: fields}), {}, store.written))
    start = failing_write(store.writes("file:" + raw))
    assert start is not None
    impact = walk(start, store)
    assert impact.datasets == {"file:" + down: ("c",)}
    page = impact_html(impact)
    for text in HOSTILE:
        assert text not in page
    # no markup but ours: every tag is one of the page's own
    tags = set(re.findall(r"<\s*/?([a-zA-Z!][a-zA-Z0-9]*)", page))
    ours = "!DOCTYPE html head meta title style body h1 h2 p svg defs marker path line g rect text"
    assert tags <= set(ours.split()) | {"ul", "li", "b"}
    assert "&lt;/text&gt;&lt;script&gt;" in page  # the name shows as typed
    store.close()

"""One evaluation per dataset version (issue 51.1), pure: what a version and a rule set are
(evaluation/reuse.py), the results as kept (history/verdict_json.py), the store and its bounds
(history/versions.py, SQLite; PostgreSQL in tests/deploy/test_history_store_postgres.py), one
scan for readers asking at once, and the facet saying where a reused verdict came from."""

from __future__ import annotations

import json
import math
import threading
import time
from pathlib import Path

import attrs
import pytest

from lineage_quality.contracts import BoundRules, DatasetPattern
from lineage_quality.evaluation.datasets import AsOf
from lineage_quality.evaluation.reuse import Reuse, files_key, rules_key, table_key, timeless
from lineage_quality.evaluation.storage import StoredFile
from lineage_quality.evaluation.written import LeftByRun
from lineage_quality.facets import assertion_json
from lineage_quality.history.verdict_json import HANDLED, results_of, results_text
from lineage_quality.history.versions import VersionBounds, open_version_verdicts
from lineage_quality.kinds import RuleKind
from lineage_quality.measures import ColumnMeasures, DatasetMeasures
from lineage_quality.results import (
    DATASET_REMOVED,
    Cause,
    Quarantined,
    RuleResult,
    Status,
    error_result,
    skipped_result,
)
from lineage_quality.rules import Operator, Rule, Threshold

ZERO = Threshold(Operator.MUST_BE, 0)
NULLS = Rule("ids_not_null", RuleKind.NULL_VALUES, ZERO, columns=("id",))
ROWS = Rule("rows", RuleKind.ROW_COUNT, Threshold(Operator.GREATER_THAN, 0))
FRESH = Rule("fresh", RuleKind("freshness"), ZERO, columns=("at",), max_age_seconds=60)
MEASURES = DatasetMeasures(
    rows=10, columns=(("id", ColumnMeasures(nulls=1, sum=2**60 + 1, mean=math.inf)),)
)


def _bound(*rules: Rule, name: str = "orders") -> BoundRules:
    return BoundRules("c", name, (DatasetPattern("file", "/lake/orders"),), rules)


def _left(*files: tuple[str, int, int]) -> LeftByRun:
    kept = tuple(StoredFile(p, p.rsplit("/", 1)[-1], size, ms) for p, size, ms in files)
    return LeftByRun(completed_ms=10_000, kept=kept, later=())


def test_a_plain_file_version_is_its_files_and_any_change_is_another() -> None:
    one = _left(("/lake/orders/a.parquet", 100, 5000), ("/lake/orders/b.parquet", 7, 6000))
    same = _left(("/lake/orders/a.parquet", 100, 5000), ("/lake/orders/b.parquet", 7, 6000))
    assert files_key("/lake/orders", one) == files_key("/lake/orders", same) is not None
    for changed in (
        _left(("/lake/orders/a.parquet", 101, 5000), ("/lake/orders/b.parquet", 7, 6000)),
        _left(("/lake/orders/a.parquet", 100, 5001), ("/lake/orders/b.parquet", 7, 6000)),
        _left(("/lake/orders/a.parquet", 100, 5000)),
        _left(("/lake/orders/a.parquet", 100, 5000), ("/lake/orders/c.parquet", 7, 6000)),
    ):
        assert files_key("/lake/orders", changed) != files_key("/lake/orders", one)
    assert files_key("/lake/other", one) != files_key("/lake/orders", one)
    assert files_key("/lake/orders", _left()) is None  # nothing listed: a doubt


def test_a_table_version_is_the_named_one_and_a_delta_commit_must_be_found() -> None:
    commits = {"/t/_delta_log/00000000000000000003.json": (900, 1234)}
    stat = commits.get
    delta = table_key("/t", AsOf(version="3"), "delta", stat)
    assert delta is not None
    assert table_key("/t", AsOf(version="3"), None, stat) == delta  # the commit tells
    # the same version number of a table made again at that path: another commit file
    assert table_key("/t", AsOf(version="3"), "delta", lambda _: (900, 9999)) != delta
    assert table_key("/t", AsOf(version="4"), "delta", stat) is None  # no commit 4: doubt
    assert table_key("/t", AsOf(timestamp_ms=5), "delta", stat) is None  # no version named
    snapshot = table_key("/w/db/t", AsOf(version="8123456789"), "iceberg", stat)
    assert snapshot is not None and snapshot != delta
    assert table_key("/w/db/t", AsOf(version="8123456789"), None, stat) is None  # unknown


def test_a_rule_set_is_its_rules_as_declared_and_clock_rules_are_never_reused() -> None:
    key = rules_key([_bound(NULLS, ROWS)])
    assert key is not None and key == rules_key([_bound(NULLS, ROWS)])
    stricter = attrs.evolve(ROWS, threshold=Threshold(Operator.GREATER_THAN, 5))
    assert rules_key([_bound(NULLS, stricter)]) != key
    assert rules_key([_bound(NULLS, ROWS)], settings=("profile",)) != key
    assert rules_key([_bound(NULLS, ROWS, name="other")]) != key
    assert not timeless(FRESH) and rules_key([_bound(NULLS, FRESH)]) is None
    clock = Rule(
        "recent",
        RuleKind.SQL,
        ZERO,
        query="SELECT COUNT(*) FROM {dataset} WHERE d > current_date()",
    )
    assert not timeless(clock)
    assert timeless(Rule("plain", RuleKind.SQL, ZERO, query="SELECT COUNT(*) FROM {dataset}"))


def test_results_are_kept_as_values_and_read_back_the_same() -> None:
    every = [
        RuleResult(
            NULLS, Status.FAILED, actual=1, failing_rows=1, row_count=10, scope="the 2 files",
            measures=MEASURES, quarantine=Quarantined("/q/run_id=r", rows=1),
        ),
        RuleResult(
            ROWS, Status.PASSED, actual=2**60 + 1, expected_text="> 0", measured=-math.inf,
            baseline=(("mean", 3.5), ("runs", 4)), compared=(("input", "file:/in"),),
            measures=MEASURES, cause=Cause.INSUFFICIENT_HISTORY, code="X", observed="bigint",
            message="m", skip_reason=None,
        ),
    ]  # fmt: skip
    back = results_of(results_text(every), [NULLS, ROWS])
    assert back == every
    assert back is not None and back[0].measures == MEASURES
    assert back[1].cause is Cause.INSUFFICIENT_HISTORY
    assert isinstance(back[1].actual, int) and back[1].measured == -math.inf
    nan = results_of(results_text([attrs.evolve(every[1], measured=math.nan)]), [ROWS])
    assert nan is not None and math.isnan(float(nan[0].measured or 0))
    # every field of a verdict is kept, or the new one must be added to verdict_json.py
    assert {f.name for f in attrs.fields(RuleResult)} == HANDLED
    # a text of another shape, a rule not in the set, a wrong type: evaluated again
    assert results_of(results_text(every), [NULLS]) is None
    assert results_of("[1]", [NULLS, ROWS]) is None
    bad = json.loads(results_text(every))
    bad["results"][0]["actual"] = "1; DROP"
    assert results_of(json.dumps(bad), [NULLS, ROWS]) is None


def test_the_store_keeps_the_first_evaluation_within_its_bounds(tmp_path: Path) -> None:
    store = open_version_verdicts(tmp_path / "h.db", VersionBounds(max_rows=3, days=1.0))
    now = int(time.time() * 1000)
    assert store.find("file:/a", "v1", "r") is None
    assert store.keep("file:/a", "v1", "r", "run-1", "[]", now_ms=now - 5000)
    assert store.keep("file:/a", "v1", "r", "run-2", "[2]", now_ms=now)  # another producer
    kept = store.find("file:/a", "v1", "r")
    assert kept is not None and (kept.run_id, kept.results) == ("run-1", "[]")
    assert store.find("file:/a", "v1", "other rules") is None
    assert store.find("file:/a", "v2", "r") is None
    # past `days` a verdict is not reused, then expires; past `max_rows` the oldest go
    assert store.find("file:/a", "v1", "r", now_ms=now + 86_400_000) is None
    for i in range(5):
        store.keep("file:/b", f"v{i}", "r", f"run-b{i}", "[]", now_ms=now + i)
    store.expire(now + 10)
    assert store.count() == 3
    assert store.find("file:/b", "v4", "r") is not None and store.find("file:/b", "v0", "r") is None
    store.expire(now + 2 * 86_400_000)
    assert store.count() == 0
    store.close()


def test_readers_of_one_version_cost_one_scan_and_say_where_it_came_from(tmp_path: Path) -> None:
    reuse = Reuse(open_version_verdicts(tmp_path / "h.db"))
    scans = []
    gate = threading.Event()

    def scan() -> list[RuleResult]:
        scans.append(1)
        gate.wait(5)  # the other readers ask while this scan is under way
        return [RuleResult(NULLS, Status.PASSED, actual=0, row_count=10, measures=MEASURES)]

    got: list[list[RuleResult]] = []

    def reader(run: str) -> None:
        got.append(reuse.results("file:/lake/orders", "v", "r", run, [NULLS], scan))

    threads = [threading.Thread(target=reader, args=(f"run-{i}",)) for i in range(10)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    gate.set()
    for t in threads:
        t.join(10)
    assert len(scans) == 1 and len(got) == 10 and reuse.reused == 9
    fresh = [r for (r,) in got if r.reused_from is None]
    again = [r for (r,) in got if r.reused_from is not None]
    assert len(fresh) == 1 and len(again) == 9
    assert all(r.status is Status.PASSED and r.measures == MEASURES for r in again)
    source = dict(again[0].reused_from or ())
    # every reader got the one evaluating run's verdicts, and it is not one of theirs
    assert {dict(r.reused_from or ())["runId"] for r in again} == {source["runId"]}
    assert source["runId"] in {f"run-{i}" for i in range(10)}
    params = assertion_json(again[0])["params"]
    assert params["reusedFrom"]["runId"] == source["runId"]
    assert params["reusedFrom"]["evaluatedAt"].endswith("+00:00")
    assert "reusedFrom" not in assertion_json(fresh[0])["params"]


def test_errors_and_unevaluated_datasets_are_never_kept(tmp_path: Path) -> None:
    reuse = Reuse(open_version_verdicts(tmp_path / "h.db"))
    scans = []

    def failing() -> list[RuleResult]:
        scans.append(1)
        return [error_result(NULLS, "cannot read", Cause.UNREADABLE)]

    def removed() -> list[RuleResult]:
        scans.append(1)
        return [skipped_result(NULLS, DATASET_REMOVED, "dropped")]

    for compute in (failing, failing, removed, removed):
        reuse.results("file:/x", "v", "r", "run", [NULLS], compute)
    assert len(scans) == 4 and reuse.reused == 0

    # kept verdicts that do not fit what this run says of the data: evaluated again
    def passing() -> list[RuleResult]:
        scans.append(1)
        return [RuleResult(NULLS, Status.PASSED, actual=0, row_count=3)]

    reuse.results("file:/y", "v", "r", "run-1", [NULLS], passing)
    reuse.results("file:/y", "v", "r", "run-2", [NULLS], passing, fits=lambda _: False)
    assert len(scans) == 6
    (again,) = reuse.results("file:/y", "v", "r", "run-3", [NULLS], passing)
    assert len(scans) == 6 and dict(again.reused_from or ())["runId"] == "run-1"


@pytest.mark.parametrize("max_versions", [0])
def test_reuse_off_with_no_versions(max_versions: int) -> None:
    from lineage_quality.producer.settings import Settings

    assert Settings.of(reuse_max_versions=max_versions).history.reuse_bounds is None
    bounds = Settings.of(reuse_max_versions=5, reuse_days=2).history.reuse_bounds
    assert bounds == VersionBounds(max_rows=5, days=2)
    with pytest.raises(ValueError, match="reuse_days"):
        Settings.of(reuse_days=0)

"""The quarantine is bounded (issue 27.4): run folders older than the retention expire, and past
the size bound the oldest run folders expire until it holds; the run being written is never
expired for another, and when it alone is over the bound, it does not fit (its rows are not
kept). Here on local folders; `tests/spark/test_quarantine.py` checks the same through
`quarantine_failures`."""

from __future__ import annotations

import os
import time
from pathlib import Path

from lineage_quality.bounds import QuarantineBounds
from lineage_quality.engine.quarantine_bounds import LocalFolders, enforce_bounds

DAY = 24 * 3600.0
NOW = time.time()


def make_run(root: Path, run_id: str, size: int, age_days: float) -> None:
    folder = root / f"run_id={run_id}" / "dataset=file%3A%2Fd" / "rule_id=r"
    folder.mkdir(parents=True)
    for name, data in (("part-0.parquet", b"x" * size), ("_SUCCESS", b"")):
        path = folder / name
        path.write_bytes(data)
        stamp = NOW - age_days * DAY
        os.utime(path, (stamp, stamp))


def runs_in(root: Path) -> set[str]:
    return {p.name.removeprefix("run_id=") for p in root.iterdir() if p.name.startswith("run_id=")}


def size_of(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def test_the_oldest_runs_expire_past_the_size_bound(tmp_path: Path) -> None:
    for run_id, age in (("a", 5), ("b", 3), ("c", 1), ("now", 0)):
        make_run(tmp_path, run_id, 400, age)
    bounds = QuarantineBounds(max_bytes=1000, retention=30 * DAY)
    assert enforce_bounds(LocalFolders(str(tmp_path)), bounds, keep="now", now=NOW)
    assert runs_in(tmp_path) == {"c", "now"}
    assert size_of(tmp_path) <= 1000


def test_runs_older_than_the_retention_expire(tmp_path: Path) -> None:
    for run_id, age in (("old", 40), ("recent", 10), ("now", 0)):
        make_run(tmp_path, run_id, 10, age)
    (tmp_path / "README").write_text("left alone: not a run folder")
    bounds = QuarantineBounds(max_bytes=10**9, retention=30 * DAY)
    assert enforce_bounds(LocalFolders(str(tmp_path)), bounds, keep="now", now=NOW)
    assert runs_in(tmp_path) == {"recent", "now"}
    assert (tmp_path / "README").exists()


def test_a_run_alone_over_the_bound_does_not_fit(tmp_path: Path) -> None:
    make_run(tmp_path, "a", 100, 1)
    make_run(tmp_path, "now", 5000, 0)
    bounds = QuarantineBounds(max_bytes=1000, retention=30 * DAY)
    assert not enforce_bounds(LocalFolders(str(tmp_path)), bounds, keep="now", now=NOW)
    assert runs_in(tmp_path) == {"a", "now"}  # none expired for nothing; the caller takes "now"


def test_a_missing_location_holds_nothing(tmp_path: Path) -> None:
    store = LocalFolders(str(tmp_path / "absent"))
    assert store.runs() == []
    assert enforce_bounds(store, QuarantineBounds(), keep="now", now=NOW)

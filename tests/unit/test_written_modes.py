"""What a run left, per write mode (evaluation/written.py), and the listing it is read from
(storage.py): pure, no Spark."""

from __future__ import annotations

from typing import Any

import pytest

from lineage_quality.evaluation.storage import StoredFile, hidden, parse_listing
from lineage_quality.evaluation.written import (
    Written,
    completed_ms,
    files_change,
    left_by_run,
    removed_by_run,
    rows_change,
    still_there,
)
from lineage_quality.values.refs import DatasetRef

T = 1_800_000_000_000  # the COMPLETE's time, ms


def _file(name: str, size: int = 100, at: int = T - 50) -> StoredFile:
    return StoredFile(f"/d{name}", name, size, at)


def _account(files: int | None, size: int | None, rows: int | None, replaced: bool) -> Written:
    return Written("r1", rows, size, files, replaced, None)


def test_files_after_the_completion_are_not_the_runs() -> None:
    left = left_by_run([_file("/a"), _file("/b", at=T), _file("/c", at=T + 1)], T)
    assert [f.below for f in left.kept] == ["/a", "/b"]
    assert [f.below for f in left.later] == ["/c"]


def test_a_replacing_write_must_be_exactly_what_is_left() -> None:
    overwrite = _account(files=1, size=100, rows=3, replaced=True)
    assert files_change(overwrite, left_by_run([_file("/a")], T)) is None
    # overwritten since: its file is gone, the new one is later
    gone = files_change(overwrite, left_by_run([_file("/new", at=T + 500)], T))
    assert gone == "run r1 wrote 1 file(s), found 0 (1 written after it)"
    # another file from before the completion: not only this run's data
    assert "wrote 1 file(s), found 2" in (
        files_change(overwrite, left_by_run([_file("/a"), _file("/b")], T)) or ""
    )
    assert "wrote 100 bytes, found 90" in (
        files_change(overwrite, left_by_run([_file("/a", size=90)], T)) or ""
    )


@pytest.mark.parametrize("mode", ["default", "append", "insertInto", "INSERT", "ignore"])
def test_any_other_write_must_still_be_there_in_full(mode: str) -> None:
    """The listener 1.53 sends these without a lifecycle state: the dataset as of the run's
    completion holds at least what the run wrote."""
    wrote = _account(files=1, size=100, rows=5, replaced=False)
    assert files_change(wrote, left_by_run([_file("/old"), _file("/a")], T)) is None
    removed = files_change(wrote, left_by_run([_file("/x", at=T + 9)], T))
    assert removed == (
        "run r1 wrote 1 file(s), found 0 from before its completion (1 written after it)"
    )
    assert rows_change(wrote, None, 9) is None  # 4 rows were there before
    assert rows_change(wrote, None, 4) == "run r1 wrote 5 rows, found 4"


def test_an_overwrite_into_partitions_may_leave_other_partitions() -> None:
    """Dynamic partition overwrite replaces only the partitions it writes."""
    overwrite = _account(files=1, size=100, rows=3, replaced=True)
    files = [_file("/k=1/a"), _file("/k=2/b")]
    left = left_by_run(files, T)
    assert files_change(overwrite, left) is None
    assert rows_change(overwrite, left, 7) is None
    assert rows_change(overwrite, left, 2) == "run r1 wrote 3 rows, found 2"
    # not partitioned: exactly
    assert rows_change(overwrite, left_by_run([_file("/a")], T), 7) is not None


def test_a_file_rewritten_or_removed_while_read_is_noticed() -> None:
    left = left_by_run([_file("/a"), _file("/b")], T)
    assert still_there(left, [_file("/a"), _file("/b"), _file("/c", at=T + 3)]) is None
    assert still_there(left, [_file("/a")]) == "/d/b was removed while it was read"
    assert still_there(left, [_file("/a"), _file("/b", at=T + 7)]) == (
        "/d/b was rewritten while it was read"
    )


def test_scope_says_what_the_verdict_covers() -> None:
    left = left_by_run([_file("/old"), _file("/a"), _file("/c", at=T + 1)], T)
    text = left.describe(_account(files=1, size=100, rows=5, replaced=False))
    assert text.startswith("the 2 file(s) of the dataset as of the run's completion (20")
    assert "1 of them written by the run" in text
    assert "1 file(s) written after it were not read" in text


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        ("2027-01-15T08:00:00.25Z", 1_800_000_000_250),
        ("2027-01-15T09:00:00.250+01:00", 1_800_000_000_250),
        ("2027-01-15T08:00:00", None),  # no zone: cannot be compared with file times
        ("yesterday", None),
        (None, None),
    ],
)
def test_completion_time(when: Any, expected: int | None) -> None:
    assert completed_ms({"eventTime": when}) == expected


def _event(*outputs: dict[str, Any]) -> dict[str, Any]:
    return {"eventType": "COMPLETE", "run": {"runId": "r"}, "outputs": list(outputs)}


def _out(state: str | None, name: str = "/w/t", **extra: Any) -> dict[str, Any]:
    facets: dict[str, Any] = {}
    if state:
        facets["lifecycleStateChange"] = {"lifecycleStateChange": state, **extra}
    return {"namespace": "file", "name": name, "facets": facets}


@pytest.mark.parametrize("state", ["DROP", "TRUNCATE", "drop"])
def test_a_removing_lifecycle_state_means_nothing_to_evaluate(state: str) -> None:
    event = _event(_out(state))
    why = removed_by_run(event, DatasetRef("outputs", 0, "file", "/w/t"))
    assert why is not None and f"lifecycleStateChange {state}" in why


def test_a_dataset_listed_twice_is_removed_if_either_entry_says_so() -> None:
    event = _event(_out(None), _out("DROP"))
    assert removed_by_run(event, DatasetRef("outputs", 0, "file", "/w/t")) is not None
    assert removed_by_run(event, DatasetRef("inputs", 0, "file", "/w/t")) is None


def test_rename_names_where_it_came_from() -> None:
    event = _event(_out("RENAME", previousIdentifier={"namespace": "file", "name": "/w/old"}))
    why = removed_by_run(event, DatasetRef("outputs", 0, "file", "/w/t")) or ""
    assert "renamed this dataset" in why and "from file:/w/old" in why


@pytest.mark.parametrize("state", [None, "OVERWRITE", "CREATE", "ALTER"])
def test_writes_are_not_removals(state: str | None) -> None:
    assert removed_by_run(_event(_out(state)), DatasetRef("outputs", 0, "file", "/w/t")) is None


def test_listing_records_survive_tabs_newlines_and_astral_names() -> None:
    names = ["/a\tb.parquet", "/k=1/x\ny.parquet", "/\U0001f600.parquet", "/plain.parquet"]
    text = "".join(f"{len(n)}:{n}\t{i * 10}\t{T + i}\n" for i, n in enumerate(names))
    found = parse_listing("s3a://b/x", text)
    assert [f.below for f in found] == names
    assert found[1].path == "s3a://b/x/k=1/x\ny.parquet" and found[1].partitioned
    assert [f.size for f in found] == [0, 10, 20, 30]
    assert parse_listing("s3a://b/x.csv", "0:\t5\t7\n") == [StoredFile("s3a://b/x.csv", "", 5, 7)]


@pytest.mark.parametrize(
    ("name", "skipped"),
    [
        ("_SUCCESS", True),
        ("_temporary", True),
        (".part-0.crc", True),
        ("part-0.parquet._COPYING_", True),
        ("_metadata", True),
        ("_k=1", False),  # a partition folder of a column named `_k`
        ("part-0.parquet", False),
    ],
)
def test_hidden_files_as_spark_reads_them(name: str, skipped: bool) -> None:
    assert hidden(name) is skipped

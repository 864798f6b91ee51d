"""How many partitions the key-set pass takes (engine/uniqueness.py `sized`): from the rows it
counts, not from a session's `spark.sql.shuffle.partitions` alone."""

from __future__ import annotations

import pytest

from lineage_quality.engine.uniqueness import ROWS_PER_PARTITION, ROWS_PER_TASK, sized


@pytest.mark.parametrize(
    ("rows", "configured", "cores", "expected"),
    [
        # a user's session keeps Spark's default of 200: a million rows get a task per core,
        # not 200 tasks of 5,000 hashes
        (1_000_000, 200, 2, 2),
        (10_000_000, 200, 2, 10),
        (10_000_000, 200, 64, 64),
        # the producer's own session (16)
        (1_000_000, 16, 2, 2),
        (2_000_000, 16, 2, 2),
        (20_000_000, 16, 2, 16),
        # no partition past ROWS_PER_PARTITION, whatever the setting says
        (200_000_000, 16, 2, 50),
        (9_000_000, 1, 2, 3),
        # a setting below the cores wins (tests put every hash in one partition)
        (100_000, 1, 2, 1),
        (0, 16, 2, 2),
        # unknown rows: the setting as it is
        (None, 200, 2, 200),
        (None, 16, 8, 16),
    ],
)
def test_partitions_follow_the_rows(
    rows: int | None, configured: int, cores: int, expected: int
) -> None:
    assert sized(rows, configured, cores) == expected


@pytest.mark.parametrize("rows", [1, 999_999, 4_000_001, 123_456_789, 10**10])
@pytest.mark.parametrize("configured", [1, 16, 200, 4000])
def test_no_partition_holds_more_than_its_bound(rows: int, configured: int) -> None:
    n = sized(rows, configured, 2)
    assert n >= 1
    assert rows / n <= ROWS_PER_PARTITION
    # and never more tasks than the setting asks, unless the bound needs them
    assert n <= max(configured, -(-rows // ROWS_PER_PARTITION))
    assert n <= max(2, -(-rows // ROWS_PER_TASK), -(-rows // ROWS_PER_PARTITION))

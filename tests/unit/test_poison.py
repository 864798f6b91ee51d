"""What an event whose handling failed gets (issue 44): dead-lettered at once when it will fail
the same way again, retried with the back-off otherwise, never counted against while the disk
is locked or full."""

from __future__ import annotations

import sqlite3

from lineage_quality.producer.backoff import Backoff
from lineage_quality.producer.poison import Troubles, deterministic, unjudged_row


def test_what_the_same_event_meets_again_is_dead_lettered_at_once() -> None:
    troubles = Troubles(5, Backoff(initial=0.5, maximum=30))
    for exc in (ValueError("x"), UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates"),
                RecursionError(), KeyError("k"), TypeError("t")):  # fmt: skip
        assert deterministic(exc)
        assert troubles.failed(1, exc) == (1, None)


def test_other_failures_wait_longer_each_time_then_give_up() -> None:
    troubles = Troubles(3, Backoff(initial=0.5, maximum=30))
    assert troubles.failed(7, OSError("disk")) == (1, 0.5)
    assert troubles.failed(7, OSError("disk")) == (2, 1.0)
    assert troubles.failed(7, OSError("disk")) == (3, None)
    troubles.succeeded(7)
    assert troubles.failed(7, OSError("disk")) == (1, 0.5)  # counted afresh


def test_a_locked_or_full_database_is_waited_for_never_counted() -> None:
    troubles = Troubles(2, Backoff(initial=0.5, maximum=30))
    locked = sqlite3.OperationalError("database is locked")
    assert not deterministic(locked)
    for _ in range(20):
        count, wait = troubles.failed(3, locked)
        assert count == 0 and wait == 0.5


def test_an_unjudged_complete_leaves_an_error_that_blocks_only_where_a_rule_would() -> None:
    event = {"job": {"namespace": "n", "name": "j"}, "eventType": "COMPLETE"}
    row = unjudged_row(event, "could not be handled: ValueError: x", blocks=True)
    assert row["status"] == "ERROR" and row["action"] == "BLOCK" and row["job"] == "n/j"
    assert "ValueError: x" in row["message"]
    assert unjudged_row(event, "r", blocks=False)["action"] == "ALERT"

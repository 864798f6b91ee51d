"""Kafka in's committable offsets (producer/kafka/offsets.py): a partition's commit never passes a
message fetched and not kept (spooled, recorded as bad, or acknowledged by Kafka out), whatever
order they are kept in; a message given up stays pending; a revoked partition is forgotten."""

from __future__ import annotations

import random

from lineage_quality.producer.kafka.offsets import Offsets

P = ("in", 0)
Q = ("in", 1)


def test_the_commit_stops_at_the_lowest_message_not_kept() -> None:
    offsets = Offsets()
    assert offsets.committable(P) is None
    for offset in range(10, 15):
        offsets.fetched(P, offset)
    assert offsets.committable(P) == 10 and offsets.pending(P) == 5
    offsets.kept(P, 11)  # spooled, synced
    offsets.kept(P, 13)
    assert offsets.committable(P) == 10  # 10 is relayed, not acknowledged yet
    offsets.kept(P, 10)
    assert offsets.committable(P) == 12
    offsets.kept(P, 12)
    assert offsets.committable(P) == 14
    offsets.kept(P, 14)
    assert offsets.committable(P) == 15 and offsets.pending(P) == 0
    offsets.fetched(Q, 3)
    assert offsets.all_committable() == {P: 15, Q: 3}


def test_a_message_given_up_holds_the_commit_and_a_revoked_partition_is_forgotten() -> None:
    offsets = Offsets()
    for offset in range(5):
        offsets.fetched(P, offset)
    offsets.kept(P, 0)
    offsets.kept(P, 2)  # 1 given up (stopping): never kept
    offsets.kept(P, 3)
    offsets.kept(P, 4)
    assert offsets.committable(P) == 1
    offsets.forget({P})
    assert offsets.committable(P) is None and offsets.all_committable() == {}
    offsets.fetched(P, 1)  # assigned again: read on from the last commit
    assert offsets.committable(P) == 1


def test_random_keeps_never_commit_past_a_pending_message() -> None:
    """Against the definition: the committable offset is the first message fetched and not
    kept, else the one after the last fetched; over many random orders of keeping."""
    rng = random.Random(52)
    for _ in range(300):
        offsets = Offsets()
        fetched: list[int] = []
        kept: set[int] = set()
        start = rng.randrange(0, 1000)
        for step in range(rng.randrange(1, 60)):
            if not fetched or rng.random() < 0.5:
                fetched.append(start + len(fetched))
                offsets.fetched(P, fetched[-1])
            else:
                choice = rng.choice(fetched)
                kept.add(choice)
                offsets.kept(P, choice)
            waiting = [o for o in fetched if o not in kept]
            expected = waiting[0] if waiting else fetched[-1] + 1
            assert offsets.committable(P) == expected, (step, fetched, kept)

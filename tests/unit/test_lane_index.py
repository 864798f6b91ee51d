"""The spool's lane index (spool/lanes.py) chooses the lane the scan over every lane chose.

A claim used to scan every lane for the oldest event of a lane nobody holds; the index keeps a
heap of free lanes' heads instead. Here thousands of seeded random steps -- events stored in 40
lanes, claims, `go_on`, releases, deletes, follow-ups held and let go, lanes written through,
events sent out without waiting and their answers (taken or not) -- and after each step the index
must name the event the scan names, and a claim must take it.
"""

from __future__ import annotations

import random

import pytest

from lineage_quality.producer.spool.index import Index
from lineage_quality.producer.spool.lanes import Lanes


def _scan(lanes: Lanes) -> int | None:
    """The old choice: a scan over every lane (with events out and broken lanes left out)."""
    held: dict[str, int] = {}
    for held_id, lane in lanes._held.items():
        held[lane] = min(held_id, held.get(lane, held_id))
    best = None
    for lane in lanes.index.lanes:
        if lane in lanes._busy or lane in lanes._direct or lane in lanes._broken:
            continue
        if lanes.index.out.get(lane, 0) >= lanes.window:  # waits for an answer
            continue
        head = lanes.index.head(lane)
        if head is None or (lane in held and head >= held[lane]):
            continue
        if best is None or head < best:
            best = head
    return best


@pytest.mark.parametrize("window", [1, 3])
def test_the_lane_index_chooses_the_lane_the_scan_chose(window: int) -> None:
    rng = random.Random(52)
    index = Index(None, None, 0.9)
    lanes = Lanes(index)
    lanes.window = window
    next_id = 1
    busy: list[str] = []  # lanes this test's "worker" holds
    held: list[int] = []
    direct: list[str] = []
    out: list[tuple[str, int]] = []  # events sent out, not answered yet
    claims = sent = failed = 0
    for _ in range(6000):
        step = rng.random()
        if step < 0.35:  # events stored (one commit: one or several lanes)
            with index.lock:
                stored = set()
                for _ in range(rng.randint(1, 3)):
                    lane = f"run-{rng.randrange(40)}"
                    if lane in direct:
                        continue
                    index.add(next_id, lane, 10)
                    stored.add(lane)
                    next_id += 1
                lanes.stored(stored)
        elif step < 0.55:  # a claim takes the oldest claimable event
            with index.lock:
                expected = _scan(lanes)
            picked = lanes.pick(0, claim=True)
            assert (picked[0] if picked else None) == expected
            if picked is not None:
                busy.append(picked[1])
                claims += 1
        elif step < 0.65 and busy:  # a worker goes on with its lane, or lets it go
            lane = busy.pop(rng.randrange(len(busy)))
            if rng.random() < 0.5 and lanes.go_on(lane) is not None:
                busy.append(lane)
            else:
                lanes.release(lane)
        elif step < 0.75 and busy:  # the head of a held lane forwarded and deleted
            lane = rng.choice(busy)
            with index.lock:
                head = index.head(lane)
                if head is not None:
                    index.remove(head)
                    lanes.removed()
        elif step < 0.82 and busy:  # the head of a held lane sent out without waiting
            lane = rng.choice(busy)
            with index.lock:
                head = index.head(lane)
            if head is not None and lanes.sending(lane, head):
                out.append((lane, head))
                sent += 1
        elif step < 0.9 and out:  # an answer: taken, or not (the lane broken till settled)
            lane, event_id = out.pop(rng.randrange(len(out)))
            taken = rng.random() < 0.8
            failed += not taken
            lanes.reported(lane, event_id, taken)
        elif step < 0.94:  # a follow-up held for its evaluation, or let go
            if held and rng.random() < 0.5:
                lanes.unhold(held.pop(rng.randrange(len(held))))
            else:
                with index.lock:
                    lane = f"run-{rng.randrange(40)}"
                    index.add(next_id, lane, 10)
                    lanes.hold(next_id, lane)
                    lanes.offer(lane)
                    held.append(next_id)
                    next_id += 1
        elif step < 0.97:  # a lane written through by the receiver, or done
            if direct and rng.random() < 0.5:
                lanes.end_direct(direct.pop())
            else:
                lane = f"run-{rng.randrange(40)}"
                if lane not in direct and lanes.begin_direct(lane):
                    direct.append(lane)
        else:
            for lane in busy:
                lanes.release(lane)
            busy.clear()
        with index.lock:
            assert lanes._claimable() == _scan(lanes)
            assert len(lanes._heads) <= 2 * len(index.lanes) + 65  # stale entries bounded
    assert claims > 500 and sent > 100 and failed > 10  # every kind of step happened

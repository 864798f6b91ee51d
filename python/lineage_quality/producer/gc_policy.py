"""The cyclic garbage collector of a long-running `serve`.

With CPython's defaults (a collection of the youngest generation every 700 net allocations of
tracked objects, the older ones every 10 of those), a producer parsing thousands of events a
second collects all the time: each event's parse (a few hundred dicts and lists) lives while the
event is in flight, long enough to be walked by a collection or two, and the older collections
walk every object the process holds (PySpark, py4j, the contracts). On Kafka in relayed to Kafka
out that was over half of Kafka in's thread's time (py-spy --native: `gc_collect_main` under the
parse), and with collections every 20,000 allocations still ~40 us of CPU per event (BENCHMARKS.md,
issue 52). The events make no cycles worth collecting early: a parse is trees of dicts and lists,
freed by reference counting when the event is done. So once started, collections go by the clock
instead: the youngest generation every second (it holds what is alive of the last second's
allocations: the events in flight at most), the middle one every ten, everything every ten
minutes -- the cyclic garbage a second makes waits at most that long.
"""

from __future__ import annotations

import gc
import threading

EVERY = 1.0  # s between two collections of the youngest generation
MIDDLE = 10  # of those between two of the middle generation
OLDEST = 600  # of those between two of every generation


def steady(stop: threading.Event | None = None) -> threading.Thread:
    """Once started: what exists now (modules, the evaluator, the contracts) is left out of
    every collection from now on (`gc.freeze`), automatic collections are off, and a daemon
    thread collects by the clock until `stop` is set (then automatic collections come back)."""
    gc.freeze()
    gc.disable()
    thread = threading.Thread(
        target=_collect, args=(stop or threading.Event(),), name="gc-steady", daemon=True
    )
    thread.start()
    return thread


def _collect(stop: threading.Event) -> None:
    ticks = 0
    try:
        while not stop.wait(EVERY):
            ticks += 1
            gc.collect(2 if ticks % OLDEST == 0 else 1 if ticks % MIDDLE == 0 else 0)
    finally:  # stopped, or this thread failing: never a process without any collection
        gc.enable()

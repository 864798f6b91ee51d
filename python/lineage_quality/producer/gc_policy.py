"""The cyclic garbage collector of a long-running `serve`.

With CPython's defaults (a collection of the youngest generation every 700 allocations, the older
ones every 10 of those), a producer parsing thousands of events a second collects all the time,
and each older collection walks every object the process holds: PySpark, py4j, the contracts,
the events waiting in memory. On Kafka in relayed to Kafka out that was over half of Kafka in's
thread's time (py-spy --native: `gc_collect_main` under the parse; BENCHMARKS.md, issue 52).
The events themselves make no cycles worth collecting early: a parse is trees of dicts and
lists, freed by reference counting when the event is done.
"""

from __future__ import annotations

import gc

# allocations between collections of the youngest generation (CPython: 700), and collections
# of a generation between two of the next one (CPython: 10 and 10)
YOUNGEST = 20_000
OLDER = (50, 100)


def steady() -> None:
    """Once started: what exists now (modules, the evaluator, the contracts) is left out of
    every collection from now on (`gc.freeze`), and collections come less often."""
    gc.freeze()
    gc.set_threshold(YOUNGEST, *OLDER)

"""Keep the evaluation's own Spark work out of the lineage. Pure: events in, events out.

In-driver, the OpenLineage listener sees every Spark job of the SparkContext, ours too (the
aggregations of an evaluation, the Parquet writes of QUARANTINE). The listener cannot filter by
job group, but its events say which job group a Spark job ran in (`spark_jobDetails.jobGroup`,
on the events sent at a Spark job's start), and every evaluation runs in a job group of its own
whose name starts with a known prefix. Not every event of a run carries it, though: the START of
a SQL execution is sent before its first Spark job, without the facet. So the events of a run are
held until the run is known:

- an event whose job group has our prefix marks the run ours: it and its held events are dropped;
- an event of a Spark job in another job group (or in none), or the run's end (COMPLETE /
  FAIL / ABORT), marks it someone else's: its held events and the later ones pass, in their order;
- application-level events (the parent run of the whole Spark application) always pass;
- a run held longer than `hold_seconds` passes (a run with no Spark job of ours in that time
  is not ours: evaluation work always starts Spark jobs in its group at once).

A held event is in memory only. That is no new way to lose events: until the listener posts them
they sit in the same JVM's listener queue, which a crash of the driver loses just the same.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

import attrs

from lineage_quality.values.event import Event

TERMINAL_TYPES = frozenset({"COMPLETE", "FAIL", "ABORT"})
REMEMBERED_RUNS = 10_000  # classified run ids kept (the oldest are forgotten first)


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def job_details(event: Event | Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The `spark_jobDetails` run facet: sent with the events of a Spark job's start."""
    details = Event.of(event).run_facets.get("spark_jobDetails")
    return details if isinstance(details, Mapping) else None


def run_id(event: Event | Mapping[str, Any]) -> str | None:
    return Event.of(event).run_id


def is_application_event(event: Event | Mapping[str, Any]) -> bool:
    """The Spark application's own run (no parent; jobType APPLICATION)."""
    ev = Event.of(event)
    job_type = _dict(ev.job_facets.get("jobType")).get("jobType")
    if job_type == "APPLICATION":
        return True
    return "parent" not in ev.run_facets and job_type is None


T = TypeVar("T")  # what is held and passed on: an event's envelope (or its text)


@attrs.define
class _Held(Generic[T]):
    since: float
    bodies: list[T]


class OwnRunFilter(Generic[T]):
    def __init__(
        self,
        group_prefix: str,
        hold_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.group_prefix = group_prefix
        self.hold_seconds = hold_seconds
        self._clock = clock
        self._ours: OrderedDict[str, None] = OrderedDict()
        self._theirs: OrderedDict[str, None] = OrderedDict()
        self._held: dict[str, _Held[T]] = {}
        self.dropped = 0

    def offer(self, given: Event | Mapping[str, Any], body: T) -> list[T]:
        """The bodies to pass on now, in order (this one, held ones, or none)."""
        event = Event.of(given)
        run = event.run_id
        if run is None or is_application_event(event):
            return [body]
        if run in self._ours:
            self.dropped += 1
            return []
        details = job_details(event)
        group = details.get("jobGroup") if details is not None else None
        if isinstance(group, str) and group.startswith(self.group_prefix):
            held = self._held.pop(run, None)
            self.dropped += 1 + (len(held.bodies) if held else 0)
            self._remember(self._ours, run)
            return []
        if run in self._theirs:
            return [body]
        held = self._held.get(run)
        if details is not None or event.event_type in TERMINAL_TYPES:
            self._remember(self._theirs, run)
            self._held.pop(run, None)
            return [*(held.bodies if held else []), body]
        if held is None:
            self._held[run] = _Held(self._clock(), [body])
        else:
            held.bodies.append(body)
        return []

    def expire(self) -> list[T]:
        """The bodies of runs held past `hold_seconds`, now passed as someone else's."""
        now = self._clock()
        late = [run for run, held in self._held.items() if now - held.since >= self.hold_seconds]
        return self._release(late)

    def flush(self) -> list[T]:
        """Every held body (at shutdown: nothing is kept back for ever)."""
        return self._release(list(self._held))

    @property
    def holding(self) -> int:
        return sum(len(h.bodies) for h in self._held.values())

    def _release(self, runs: list[str]) -> list[T]:
        out: list[T] = []
        for run in runs:
            out.extend(self._held.pop(run).bodies)
            self._remember(self._theirs, run)
        return out

    @staticmethod
    def _remember(runs: OrderedDict[str, None], run: str) -> None:
        runs[run] = None
        runs.move_to_end(run)
        while len(runs) > REMEMBERED_RUNS:
            runs.popitem(last=False)

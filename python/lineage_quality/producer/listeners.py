"""Where an event's results go besides the event itself: a list of listeners, each told once per
handled COMPLETE what is known of it (`Ready`), in the order of the list.

The lineage step comes first (`Fanout.ready`): the run's lineage is kept and the marks of its
outputs from upstream are known (lineage/keeper.py); then every listener gets the results and
those marks. The built-in listeners, made by `outputs.factory.result_listeners` from the
producer's parts and its outputs:

- `MetricsListener`: the Prometheus counters (assertions, each rule's last verdict, marks);
- `RunVerdictsListener`: the run's verdicts for `GET /api/v1/runs/{runId}` and `gate`, in the
  spool and, with a shared store, for the other producers (shared_runs.py);
- `ResultSinksListener`: DataHub and the other result sinks (result_sinks.py): they queue and
  never block, and what they raise is logged;
- `AlertsListener`: the alert outbox (alerts.py, lineage_alerts.py). Last, and what it raises
  propagates: the event is handled again, so an alert is stored before its event can leave.

A new destination of results (the failed-row samples, the quality view's store) is one more
class with `ready` and `close`, added to the list where it is made.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol

import attrs

from lineage_quality.lineage.keeper import LineageKeeper
from lineage_quality.lineage.model import Mark
from lineage_quality.producer.alert_sender import AlertSender
from lineage_quality.producer.lineage_alerts import event_alerts
from lineage_quality.producer.metrics import Metrics
from lineage_quality.producer.result_sinks import ResultSink, close_sinks, emit_marks, emit_results
from lineage_quality.producer.run_verdicts import run_ids, verdict_rows
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.shared_runs import SharedRuns, remember_verdicts
from lineage_quality.results import RuleResult
from lineage_quality.values.refs import DatasetRef

log = logging.getLogger(__name__)

Results = Mapping[DatasetRef, Sequence[RuleResult]]
Marks = Mapping[DatasetRef, Sequence[Mark]]


@attrs.frozen
class Ready:
    """What is known of one event once its results are ready.

    `evaluated`: rules were evaluated on it (`results` are its verdicts, `provisional` those of
    datasets whose evaluation passed its deadline, the real ones to follow); False for a
    COMPLETE nothing is bound to, whose lineage alone was kept. `late`: the real results of a
    follow-up event. `kept`: its lineage was kept, and `marks` are its outputs' marks from
    upstream (empty ones included: a mark gone is news to DataHub too)."""

    event: Mapping[str, Any]
    results: Results = attrs.field(factory=dict)
    provisional: frozenset[DatasetRef] = frozenset()
    evaluated: bool = True
    late: bool = False
    kept: bool = False
    marks: Marks = attrs.field(factory=dict)

    @property
    def judged(self) -> Results:
        """The results that are verdicts (not a timeout whose verdict follows)."""
        if not self.provisional:
            return self.results
        return {ref: r for ref, r in self.results.items() if ref not in self.provisional}


class Listener(Protocol):
    """One destination of results."""

    def ready(self, ready: Ready) -> None: ...

    def close(self) -> None: ...


class Fanout:
    """The lineage step, then each listener in turn."""

    def __init__(self, lineage: LineageKeeper | None, listeners: Sequence[Listener]) -> None:
        self.lineage = lineage
        self.listeners = list(listeners)

    def results(
        self,
        event: Mapping[str, Any],
        results: Results,
        provisional: Collection[DatasetRef] = (),
        late: bool = False,
    ) -> Marks:
        """An evaluated event's results (`late`: a follow-up's): its lineage kept (a follow-up
        only updates the writes it judged), then the listeners. The marks of its outputs."""
        waiting = frozenset(provisional)
        if self.lineage is None:
            ready = Ready(event, results, waiting, late=late)
        elif late:
            self.lineage.late(event, results)
            ready = Ready(event, results, waiting, late=True)
        else:
            marks = self.lineage.keep(event, results, waiting)
            ready = Ready(event, results, waiting, kept=True, marks=marks)
        self._tell(ready)
        return ready.marks

    def lineage_only(self, event: Mapping[str, Any], marks: Marks | None = None) -> Marks:
        """A COMPLETE nothing was evaluated on: its lineage kept (unless `marks` says what the
        keeping found already), then the listeners. Its outputs' marks."""
        if self.lineage is None:
            return {}
        found = self.lineage.keep(event, {}) if marks is None else marks
        self._tell(Ready(event, evaluated=False, kept=True, marks=found))
        return found

    def kept_at_once(self, event: Mapping[str, Any]) -> bool:
        """The intake's step for a COMPLETE nothing is evaluated on (intake.py): its lineage
        kept; True when an output is marked (a worker keeps it again, the same rows, and tells
        the listeners), else the listeners told now (DataHub: the marks it no longer carries)."""
        if self.lineage is None or self.lineage.keep(event, {}):
            return self.lineage is not None
        self.lineage_only(event, marks={})
        return False

    def _tell(self, ready: Ready) -> None:
        for listener in self.listeners:
            listener.ready(ready)

    def close(self) -> None:
        for listener in self.listeners:
            try:
                listener.close()
            except Exception:
                log.exception("closing %s failed", type(listener).__name__)


class MetricsListener:
    """The Prometheus counters of results and marks."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def ready(self, ready: Ready) -> None:
        if ready.evaluated:
            self.metrics.count_results(ready.results, ready.event, ready.provisional)
        for found in ready.marks.values():
            for mark in found:
                scope = "dataset" if mark.column is None else "column"
                self.metrics.upstream_marks.labels(scope=scope).inc()

    def close(self) -> None:
        pass


class VerdictStore(Protocol):
    def add_verdicts(self, run_ids: Sequence[str], rows: str) -> None: ...


class RunVerdictsListener:
    """The run's verdicts, for `GET /api/v1/runs/{runId}` and `gate`: in the spool, and in the
    shared store for the other producers."""

    def __init__(self, spool: VerdictStore, shared: SharedRuns | None) -> None:
        self.spool = spool
        self.shared = shared

    def ready(self, ready: Ready) -> None:
        if not (ready.evaluated and ready.results):  # a kept COMPLETE's: no run ids to read
            return
        ids = run_ids(ready.event)
        if not ids:
            return
        rows = json.dumps(verdict_rows(ready.event, ready.results))
        try:
            self.spool.add_verdicts(ids, rows)
        except sqlite3.Error as exc:
            log.warning("could not keep the verdicts of run %s: %s", ids[0], exc)
        remember_verdicts(self.shared, ready.event, ids, rows)

    def close(self) -> None:
        pass


class ResultSinksListener:
    """DataHub and the other result sinks: the results of an evaluation (timeouts at the
    deadline, the real ones again with the follow-up), and the marks of a kept COMPLETE."""

    def __init__(self, sinks: Sequence[ResultSink]) -> None:
        self.sinks = list(sinks)

    def ready(self, ready: Ready) -> None:
        if ready.evaluated:
            emit_results(self.sinks, ready.event, ready.results)
        if ready.kept:
            emit_marks(self.sinks, ready.event, ready.marks)

    def close(self) -> None:
        close_sinks(self.sinks)


class AlertsListener:
    """The alerts of an event (its failures with their downstream count, the critical ones),
    offered to the durable outbox. A timeout whose verdict follows alerts nothing yet."""

    def __init__(
        self, alerts: AlertSender, lineage: LineageKeeper | None, settings: Settings
    ) -> None:
        self.alerts = alerts
        self.lineage = lineage
        self.settings = settings

    def ready(self, ready: Ready) -> None:
        alerts = event_alerts(ready.event, ready.judged, ready.marks, self.lineage, self.settings)
        if not alerts:
            return
        # An error here propagates: the event is handled again (its results are remembered), so
        # the alert is stored before the event can leave the spool.
        added = self.alerts.outbox.offer(self.alerts.sinks, alerts)
        if added:
            log.info("%d alert(s) queued for run %s", added, alerts[0].run_id)

    def close(self) -> None:
        pass  # the sender is stopped by the producer, after its workers

"""The producer: receiver -> spool -> (evaluate, enrich on COMPLETE) -> forward.

Workers (`workers`, default 4) take events from the spool lane by lane (a lane is a run): a run's
events go out in arrival order, and a long evaluation holds up only its own run.

A COMPLETE event with bound rules waits for its evaluation at most `evaluation_timeout` seconds.
Then it goes on with the rules not evaluated yet as ERROR results ("evaluation timed out"), and the
evaluation goes on: when it ends, a follow-up event for the same run (`eventType`
`late_event_type`, OTHER by default) carries the real results of those datasets. The follow-up is
in the spool, in the run's lane right after the timed-out event, before that event is forwarded:
it goes out after it, later events of the run wait behind it, and a restart re-evaluates it.
Spark work still running after `cancel_after` seconds is cancelled; the follow-up then reports
ERROR "evaluation cancelled".

Forwarding retries with back-off until the sink takes the event (forward.py: Delivery); an event
leaves the spool only after that (at least once: a crash between the two sends it again).

An event is parsed once, by the receiver, into the form that keeps numbers as written (rawjson);
that form goes through the spool (in memory, with the body) to the worker, the evaluation and
enrich, and is written to text once for the spool and the sink. Only an event read back from the
database (after a restart, a retry) is parsed again, once; and a transport other than plain http
gets a plain dict of the text (forward.py: RawEvent), as openlineage-python's transports expect.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from lineage_quality import rawjson
from lineage_quality.evaluation.background import Evaluation
from lineage_quality.evaluation.evaluator import Evaluator
from lineage_quality.evaluation.refs import DatasetRef
from lineage_quality.lineage.keeper import LineageKeeper
from lineage_quality.lineage.model import Mark
from lineage_quality.producer.alert_sender import AlertSender
from lineage_quality.producer.counters import Counters
from lineage_quality.producer.enrich import enrich
from lineage_quality.producer.envelope import Envelope
from lineage_quality.producer.events import late_skeleton, now_iso
from lineage_quality.producer.forward import Delivery, Forwarder
from lineage_quality.producer.health import Health
from lineage_quality.producer.intake import Accept, Intake
from lineage_quality.producer.lineage_alerts import event_alerts
from lineage_quality.producer.metrics import Metrics, refusal_reason
from lineage_quality.producer.poison import Troubles, describe, keep_unjudged
from lineage_quality.producer.receiver import Receiver
from lineage_quality.producer.result_sinks import ResultSink, close_sinks, emit_marks, emit_results
from lineage_quality.producer.run_verdicts import (
    remember_failure,
    run_failed,
    run_ids,
    verdict_rows,
)
from lineage_quality.producer.settings import DEFAULTS, Settings
from lineage_quality.producer.shared_runs import (
    SharedRuns,
    remember_event,
    remember_verdicts,
    reuse,
    run_status,
)
from lineage_quality.producer.shutdown import close_in_turn, drain, join_all, usable
from lineage_quality.producer.spool import LATE, Spool, SpooledEvent
from lineage_quality.producer.spooled import needs_no_parse, opened
from lineage_quality.producer.write_through import SinkLatency, WriteThrough
from lineage_quality.results import RuleResult

log = logging.getLogger(__name__)

JOB_GROUP_PREFIX = "lq-event-"  # every evaluation's Spark job group starts with it
_STOP_POLL = 0.5

Results = Mapping[DatasetRef, Sequence[RuleResult]]
Marks = Mapping[DatasetRef, Sequence[Mark]]


class Producer:
    """The producer of one `Settings`: its receiver, `settings.workers` workers, and what they
    share (spool, evaluator, forwarder, metrics). `result_sinks` (e.g. DataHub assertions) and
    `alerts` (webhooks) get each evaluation's results, on their own threads (both made from
    `settings.outputs` by outputs/factory.py). `accept`: what the receiver hands each event to,
    instead of the producer's own `intake` (write-through or spool; intake.py)."""

    def __init__(
        self,
        evaluator: Evaluator,
        forwarder: Forwarder,
        spool: Spool,
        settings: Settings = DEFAULTS,
        *,
        result_sinks: Sequence[ResultSink] = (),
        alerts: AlertSender | None = None,
        accept: Accept | None = None,
        lineage: LineageKeeper | None = None,
        shared: SharedRuns | None = None,
    ) -> None:
        self.settings = settings
        self.shared = shared  # run verdicts and evaluated events shared by producers (--history)
        # each COMPLETE's lineage and its outputs' health, and the marks from upstream
        self.lineage = lineage
        self.alerts = alerts  # webhooks; delivered on their own thread, never blocking events
        # per-rule series labelled from the contracts (never from names in events)
        self.metrics = Metrics(getattr(evaluator, "bindings", ()))
        self.metrics.watch_spool(spool.usage)
        if alerts is not None:
            self.metrics.watch_alerts(alerts.outbox.pending)
            alerts.on_sent = lambda label: self.metrics.alerts_sent.labels(sink=label).inc()
            alerts.on_failed = lambda label: self.metrics.alerts_failed.labels(sink=label).inc()
            alerts.outbox.on_expired = self.metrics.alerts_expired.inc
        if lineage is not None:
            lineage.on_failed = self.metrics.lineage_failures.inc
        self.evaluator = evaluator
        self.result_sinks = list(result_sinks)  # e.g. DataHub assertions; never block events
        self.forwarder = forwarder
        self.spool = spool
        self.counters = Counters()
        self.health = Health(evaluator, spool, warm=settings.warm_evaluator)
        self.receiver = Receiver(
            accept or self._accept,
            settings,
            runs=self.run_status,
            ready=self.health.ready,
            metrics=self.metrics.exposition,
            on_refused=lambda status: self.metrics.events_refused.labels(
                reason=refusal_reason(status)
            ).inc(),
        )
        self._stop = threading.Event()
        self._stopping = threading.Event()  # stop() began (the drain, then _stop)
        self.delivery = Delivery(
            forwarder,
            spool,
            settings,
            self._stop,
            self._count,
            lambda item: self._note_run(item, -1),
        )
        self._counted = {
            "forwarded": self.metrics.events_forwarded,
            "forward_failures": self.metrics.forward_failures,
            "dead_letters": self.metrics.dead_letters,
            "dead_letters_expired": self.metrics.dead_letters_expired,
        }
        self.write_through = WriteThrough(
            getattr(forwarder, "fast", None),  # a forwarder of tests may have neither
            getattr(forwarder, "latency", None) or SinkLatency(1.0),
            settings.write_through_below,
            settings.write_through_timeout,
        )
        self.intake = Intake(
            spool, evaluator, self.write_through, self.metrics, self._count,
            lineage=None if lineage is None else self._kept_at_once,
        )  # fmt: skip
        self._workers = [
            threading.Thread(target=self._work, name=f"lq-worker-{i}", daemon=True)
            for i in range(max(1, settings.workers))
        ]
        self._troubles = Troubles(settings.poison_after, settings.retry)
        self._running: dict[str, Evaluation] = {}
        self._running_lock = threading.Lock()

    @property
    def forwarded(self) -> int:
        return self.counters["forwarded"]

    def _count(self, name: str) -> None:
        """One more `forwarded`, `forward_failures`, `dead_letters` or `dead_letters_expired`
        (delivery), in the counters and the metrics."""
        self.counters.add(name)
        self._counted[name].inc()

    def _accept(self, body: str, event: Any) -> None:
        """The producer's own intake (intake.py): write-through or spool."""
        self.intake.accept(body, event)

    def _note_run(self, item: SpooledEvent, step: int) -> None:
        """Keep `GET /api/v1/runs/{runId}` informed: a COMPLETE of the run waits (+1) or was
        handled (-1); any other event just makes the run known."""
        envelope = opened(item)
        if not envelope.run_ids:
            return
        try:
            self.spool.run_seen(envelope.run_ids, step if envelope.complete else 0)
        except sqlite3.Error as exc:
            log.warning("could not record the run of an event: %s", exc)

    def run_status(self, run_id: str) -> tuple[int, dict[str, Any]]:
        """What `GET /api/v1/runs/{runId}` answers (shared_runs.run_status)."""
        return run_status(self.spool, self.shared, run_id)

    @property
    def url(self) -> str:
        return self.receiver.url

    def start(self) -> None:
        self.health.start()
        if self.alerts is not None:
            self.alerts.start()
        for worker in self._workers:
            worker.start()
        self.receiver.start()
        log.info("listening on %s/api/v1/lineage", self.url)

    def stop(
        self,
        drain_timeout: float = 0.0,
        deadline: float | None = None,
        step: Callable[[str], None] = lambda what: None,
    ) -> None:
        """Stop: no new event; the queued ones forwarded for up to `drain_timeout` seconds (no
        longer once the evaluator's JVM is gone: nothing more can be evaluated, and no new JVM
        is started while stopping); then the workers, forwarder, result sinks, lineage store and
        alert sender, each within its share of what is left before `deadline` (a
        `time.monotonic()`; none: the in-driver mode's longer shares), left behind past it
        (shutdown.py). Events not forwarded stay in the spool. `step`: told each step."""
        step("stopping the receiver")
        self.receiver.stop()
        self._stopping.set()
        self.evaluator.stopping = True  # a JVM that dies now is not replaced
        if drain_timeout:
            step("draining the spool")
            drain(self.spool.wait_empty, self._cut_by_the_stop, drain_timeout)
        self._stop.set()
        self.spool.wake()
        # a send waiting for Kafka's report ends now; its event stays (a forwarder of one's own,
        # with only send and close, has none)
        interrupt = getattr(self.forwarder, "interrupt", None)
        if callable(interrupt):
            interrupt()
        with self._running_lock:
            running = list(self._running.values())
        for evaluation in running:  # their events stay in the spool for the next start
            evaluation.cancel_in_background("cancelled: the producer is stopping")
        lineage, alerts = self.lineage, self.alerts
        parts: list[tuple[str, Callable[[float], object]]] = [
            ("the workers", lambda seconds: join_all(self._workers, seconds)),
            ("the forwarder", lambda seconds: self.forwarder.close()),
            ("the result sinks", lambda seconds: close_sinks(self.result_sinks)),
        ]
        if lineage is not None:  # after the workers: none is keeping an event's lineage
            parts.append(("the lineage store", lambda seconds: lineage.close()))
        if alerts is not None:
            parts.append(("the alert sender", lambda seconds: alerts.stop(timeout=seconds)))
        close_in_turn(parts, deadline, step)

    def _cut_by_the_stop(self) -> bool:
        """Stopping with the evaluator's JVM gone or going (signalled with the process group):
        an evaluation's results say so, not what the data is; its event waits in the spool."""
        return self._stopping.is_set() and not usable(self.evaluator)

    def process(self, body: str) -> str:
        """Evaluate and enrich one event's JSON, waiting as long as it takes; events with nothing
        bound come back unchanged."""
        envelope = Envelope.read(body)
        event = envelope.tree
        if not self._needs_evaluation(envelope):
            marks = self._lineage(envelope, {})
            if not marks:
                return body
            return rawjson.dumps(enrich(event, {}, self.settings.max_added_bytes, marks))
        results = self.evaluator.evaluate(event)
        marks = self._results_ready(event, results)
        return rawjson.dumps(enrich(event, results, self.settings.max_added_bytes, marks))

    # -- workers --------------------------------------------------------------------------------

    def _work(self) -> None:
        """A worker: claim an event, handle it, go on with its lane while the spool's lane
        policy keeps it there (spool/lanes.py), then claim afresh."""
        item: SpooledEvent | None = None
        while not self._stop.is_set():
            if item is None:
                item = self.spool.claim(timeout=_STOP_POLL)
                if item is None:
                    continue
            if self._stop.is_set():  # no new work once stopping: it stays in the spool
                self.spool.release(item.lane)
                break
            release = True
            following: SpooledEvent | None = None
            try:
                release = self._handle(item)
                self._troubles.succeeded(item.id)
            except Exception as exc:
                self._troubled(item, exc)
            finally:
                if release:
                    if self._stop.is_set():
                        self.spool.release(item.lane)
                    else:
                        following = self.spool.go_on(item.lane)
            item = following

    def _troubled(self, item: SpooledEvent, exc: Exception) -> None:
        """Handling `item` raised: dead-letter it, or wait and try again (poison.py)."""
        failures, backoff = self._troubles.failed(item.id, exc)
        if backoff is None:
            log.error(
                "event %d could not be handled (%s, %d time(s)); moving it to the dead letters",
                item.id, describe(exc), failures, exc_info=exc,
            )  # fmt: skip
            reason = f"could not be handled: {describe(exc)}"
            if not item.enriched and item.kind != LATE:  # its run must not pass `gate` now
                keep_unjudged(self.spool, self.evaluator, opened(item).tree, reason)
            if self.delivery.bury(item, reason):
                return
            backoff = self.settings.retry.maximum  # not even buried (a full disk): wait
        log.warning(
            "unexpected error handling event %d (%s); retrying it in %.1fs (%d of %d)",
            item.id, describe(exc), backoff, failures, self.settings.poison_after, exc_info=exc,
        )  # fmt: skip
        with self.spool.parked(item.lane):
            self._stop.wait(backoff)

    def _handle(self, item: SpooledEvent) -> bool:
        """Evaluate if needed, forward, delete. False when the lane was handed to a running
        evaluation (a follow-up waiting for its results), which releases it."""
        delivery = self.delivery
        if needs_no_parse(item):  # as received, of a type never evaluated: forward it as it is
            if delivery.forward(item, item.body):
                delivery.delete(item, item.run_ids, 0)
            return True
        # parsed once: by the receiver (its envelope kept with the body), or here when read back
        # from the database
        envelope = opened(item)
        body = item.body
        if not item.enriched:
            prepared = self._prepare(item, envelope)
            if prepared is None:  # stopping, or a follow-up now held by its evaluation
                return item.kind != LATE or self._stop.is_set()
            body = prepared
        if delivery.forward(item, body):
            # the run's waiting COMPLETE count drops in the delete's own transaction
            # a follow-up (LATE) records nothing: its COMPLETE did
            late = item.kind == LATE
            ids = [] if late else envelope.run_ids
            delivery.delete(item, ids, -1 if envelope.complete and not late else 0)
        return True

    def _needs_evaluation(self, envelope: Envelope) -> bool:
        return envelope.complete and bool(envelope.bound(self.evaluator))

    def _prepare(self, item: SpooledEvent, envelope: Envelope) -> str | None:
        """What goes to the sink for `item`: its body as it is, or enriched with the results of
        its evaluation. None while stopping or when a follow-up's lane was handed to its
        evaluation."""
        event = envelope.tree
        if event is None:
            log.error("event %d in the spool is not JSON; forwarding it as it is", item.id)
            return item.body
        if item.kind == LATE:
            return self._evaluate_late(item, event)
        if not isinstance(event, dict):
            return item.body
        if event.get("eventType") == "FAIL":
            remember_failure(self.spool, event)
        if not self._needs_evaluation(envelope):
            marks = self._lineage(envelope, {})
            if not marks:
                return item.body
            return self._keep(item, enrich(event, {}, self.settings.max_added_bytes, marks))
        done = reuse(self.shared, event, self.spool, item.id, envelope.run_ids)
        if done is not None:  # redelivered (Kafka): evaluated by a producer already
            return done
        return self._evaluate(item, event, envelope.bound(self.evaluator))

    def _lineage(self, envelope: Envelope, results: Results) -> Marks:
        """A COMPLETE nothing was evaluated on: its lineage kept, the marks of its outputs."""
        if self.lineage is None or not envelope.complete or envelope.tree is None:
            return {}
        return self._marked(envelope.tree, results, self.lineage.keep(envelope.tree, results))

    def _kept_at_once(self, event: Mapping[str, Any]) -> bool:
        """The intake's step for a COMPLETE nothing is evaluated on: its lineage kept; True when
        an output is marked (a worker keeps it again, the same rows, and handles the marks)."""
        assert self.lineage is not None
        if self.lineage.keep(event, {}):
            return True
        emit_marks(self.result_sinks, event, {})  # DataHub: the marks it no longer carries
        return False

    def _marked(self, event: Mapping[str, Any], results: Results, marks: Marks) -> Marks:
        """The marks of a kept COMPLETE's outputs: counted, to the result sinks, alerted."""
        for found in marks.values():
            for mark in found:
                scope = "dataset" if mark.column is None else "column"
                self.metrics.upstream_marks.labels(scope=scope).inc()
        emit_marks(self.result_sinks, event, marks)  # DataHub's propagated assertions
        self._alert(event, results, marks)  # after the lineage is kept: readers, critical ones
        return marks

    def _start(self, event: Mapping[str, Any], item: SpooledEvent, bound: Any = None) -> Evaluation:
        group = f"{JOB_GROUP_PREFIX}{item.id}-{uuid.uuid4().hex[:8]}"  # unique in the SparkContext
        evaluation = Evaluation(
            self.evaluator,
            event,
            group,
            self.settings.cancel_after,
            self.settings.kill_after_cancel,
            run_failed=run_failed(self.spool, event),
            bound=bound,
        )
        with self._running_lock:
            self._running[group] = evaluation
        evaluation.when_done(lambda: self._forget(group))
        started = time.monotonic()
        evaluation.when_done(lambda: self._measure(evaluation, started))
        return evaluation.start()

    def _measure(self, evaluation: Evaluation, started: float) -> None:
        outcome = "cancelled" if evaluation.cancelled else "error" if evaluation.error else "ok"
        self.metrics.evaluations.labels(outcome=outcome).inc()
        self.metrics.evaluation_seconds.observe(time.monotonic() - started)

    def _forget(self, group: str) -> None:
        with self._running_lock:
            self._running.pop(group, None)

    def _wait(self, evaluation: Evaluation) -> bool | None:
        """True if it ended in time, False past the deadline, None if the producer is stopping."""
        waited = 0.0
        while not self._stop.is_set():
            step = _STOP_POLL
            if self.settings.evaluation_timeout is not None:
                step = min(step, self.settings.evaluation_timeout - waited)
            if step <= 0:
                return evaluation.done.is_set()
            if evaluation.done.wait(step):
                return True
            waited += step
        return None

    def _evaluate(self, item: SpooledEvent, event: dict[str, Any], bound: Any) -> str | None:
        if self._cut_by_the_stop():  # not even started: it waits for the next start
            self._stop.wait(_STOP_POLL)
            return None
        evaluation = self._start(event, item, bound)
        with self.spool.parked(item.lane):  # other runs' events get another worker meanwhile
            in_time = self._wait(evaluation)
        if in_time is None or self._cut_by_the_stop():
            return None  # stopping: the event stays in the spool, evaluated again next time
        if in_time:
            results = evaluation.final()
            marks = self._results_ready(event, results)
            return self._keep(
                item, enrich(event, results, self.settings.max_added_bytes, marks), event
            )

        message = f"evaluation timed out after {self.settings.evaluation_timeout:g}s"
        results, late = evaluation.partial(message)
        if not late:  # every dataset finished just now
            results = evaluation.final()
            marks = self._results_ready(event, results)
            return self._keep(
                item, enrich(event, results, self.settings.max_added_bytes, marks), event
            )
        self.counters.add("timeouts")
        log.warning(
            "event %d (%s): %s; forwarding it with %d dataset(s) as ERROR, their results follow "
            "in an %s event",
            item.id,
            (event.get("job") or {}).get("name"),
            message,
            len(late),
            self.settings.late_event_type,
        )
        marks = self._results_ready(event, results, provisional=late)
        body = rawjson.dumps(enrich(event, results, self.settings.max_added_bytes, marks))
        skeleton, mapping = late_skeleton(event, late, self.settings.late_event_type)
        try:
            late_id = self.spool.hand_over(item.id, body, rawjson.dumps(skeleton))
        except sqlite3.Error as exc:
            # Without the follow-up stored, the event waits for its evaluation after all.
            log.error("could not store the follow-up of event %d (%s); waiting", item.id, exc)
            with self.spool.parked(item.lane):
                if self._wait_forever(evaluation) is None:
                    return None
            results = evaluation.final()
            marks = self._results_ready(event, results)
            return self._keep(
                item, enrich(event, results, self.settings.max_added_bytes, marks), event
            )
        self.counters.add("late")
        evaluation.when_done(
            lambda: self._deliver_late(
                late_id, skeleton, mapping, evaluation, lambda: self.spool.unhold(late_id)
            )
        )
        return body

    def _wait_forever(self, evaluation: Evaluation) -> bool | None:
        while not self._stop.is_set():
            if evaluation.done.wait(_STOP_POLL):
                return True
        return None

    def _evaluate_late(self, item: SpooledEvent, skeleton: dict[str, Any]) -> str | None:
        """A follow-up whose evaluation did not finish before a restart: evaluate it again."""
        evaluation = self._start(skeleton, item)
        mapping = {ref: ref for ref in evaluation.bound}
        evaluation.when_done(
            lambda: self._deliver_late(
                item.id, skeleton, mapping, evaluation, lambda: self.spool.release(item.lane)
            )
        )
        return None

    def _deliver_late(
        self,
        late_id: int,
        skeleton: dict[str, Any],
        mapping: Mapping[DatasetRef, DatasetRef],
        evaluation: Evaluation,
        release: Callable[[], None],
    ) -> None:
        """The evaluation ended: its results become the follow-up event, ready to forward (after
        the timed-out event, in the same lane) once `release` lets go of it."""
        try:
            if (self._stop.is_set() and evaluation.cancelled) or self._cut_by_the_stop():
                return  # cut by stop(): evaluated again after the restart
            results = evaluation.final()
            late = {mapping[ref]: r for ref, r in results.items() if ref in mapping}
            self._results_ready(skeleton, late, late=True)
            event = {**skeleton, "eventTime": now_iso()}
            enriched = enrich(event, late, self.settings.max_added_bytes)
            self.spool.replace(late_id, rawjson.dumps(enriched))
            log.info("late results of %d dataset(s) ready as event %d", len(late), late_id)
        except Exception:
            log.exception("could not store the late results of event %d", late_id)
        finally:
            release()

    def _results_ready(
        self,
        event: Mapping[str, Any],
        results: Results,
        provisional: Collection[DatasetRef] = (),
        late: bool = False,
    ) -> Marks:
        """Results that go out with `event` (hook for result sinks, e.g. DataHub). The
        `provisional` datasets' results are timeouts whose real results follow: no alert yet.
        `late`: those real results, in the follow-up. The marks of the event's outputs from
        upstream (lineage/keeper.py), kept with the run's lineage (none for a follow-up)."""
        self.metrics.count_results(results, event, provisional)
        ids = run_ids(event)
        if ids and results:
            rows = json.dumps(verdict_rows(event, results))
            try:
                self.spool.add_verdicts(ids, rows)
            except sqlite3.Error as exc:
                log.warning("could not keep the verdicts of run %s: %s", ids[0], exc)
            remember_verdicts(self.shared, event, ids, rows)
        emit_results(self.result_sinks, event, results)
        judged = {ref: r for ref, r in results.items() if ref not in provisional}
        if self.lineage is None or late:
            if self.lineage is not None:
                self.lineage.late(event, results)
            self._alert(event, judged, {})
            return {}
        return self._marked(event, judged, self.lineage.keep(event, results, provisional))

    def _alert(self, event: Mapping[str, Any], results: Results, marks: Marks) -> None:
        if self.alerts is None:
            return
        alerts = event_alerts(event, results, marks, self.lineage, self.settings)
        if not alerts:
            return
        # An error here propagates: the event is handled again (its results are remembered), so
        # the alert is stored before the event can leave the spool.
        added = self.alerts.outbox.offer(self.alerts.sinks, alerts)
        if added:
            log.info("%d alert(s) queued for run %s", added, alerts[0].run_id)

    def _keep(self, item: SpooledEvent, enriched: dict[str, Any], evaluated: Any = None) -> str:
        """`enriched` as text (written once), kept in the spool in place of the received body;
        and in the shared store when it is the final evaluation of `evaluated` (as received)."""
        body = rawjson.dumps(enriched)
        if evaluated is not None:
            remember_event(self.shared, evaluated, body)
        try:
            self.spool.replace(item.id, body)
        except sqlite3.Error as exc:  # only costs a re-evaluation after a crash
            log.warning("could not keep the enriched event %d in the spool: %s", item.id, exc)
        return body

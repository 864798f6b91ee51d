"""The producer: receiver -> spool -> (evaluate, enrich on COMPLETE) -> forward.

Workers (`workers`, default 4) take events from the spool lane by lane (a lane is a run): a run's
events go out in arrival order, and a long evaluation holds up only its own run.

A COMPLETE event with bound rules waits for its evaluation (evaluations.py) at most
`evaluation_timeout` seconds; past it, its late datasets' results follow in a follow-up event
(late_results.py). Its results go to the listeners (listeners.py) after the lineage step.

Forwarding retries with back-off until the sink takes the event (forward.py: Delivery); an event
leaves the spool only after that (at least once: a crash between the two sends it again).

An event is parsed once, by the receiver (rawjson: numbers as written), and that parse goes
through the spool to the worker, the evaluation and enrich (producer/envelope.py); only an event
read back from the database (a restart, a retry) is parsed again, once.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import Any

from lineage_quality import rawjson
from lineage_quality.evaluation.evaluator import Evaluator
from lineage_quality.lineage.keeper import LineageKeeper
from lineage_quality.producer.alert_sender import AlertSender
from lineage_quality.producer.counters import Counters
from lineage_quality.producer.enrich import enrich
from lineage_quality.producer.envelope import Envelope
from lineage_quality.producer.evaluations import JOB_GROUP_PREFIX, STOP_POLL, Evaluations
from lineage_quality.producer.forward import Delivery, Forwarder
from lineage_quality.producer.health import Health
from lineage_quality.producer.intake import Accept, Intake
from lineage_quality.producer.late_results import LateResults
from lineage_quality.producer.listeners import Fanout, Marks, Results
from lineage_quality.producer.metrics import Metrics, refusal_reason
from lineage_quality.producer.outputs.factory import result_listeners
from lineage_quality.producer.poison import Troubles
from lineage_quality.producer.receiver import Receiver
from lineage_quality.producer.result_sinks import ResultSink
from lineage_quality.producer.runs import Runs
from lineage_quality.producer.settings import DEFAULTS, Settings
from lineage_quality.producer.shared_runs import SharedRuns, remember_event, reuse
from lineage_quality.producer.shutdown import close_in_turn, drain, parts_of, usable
from lineage_quality.producer.spool import LATE, Spool, SpooledEvent
from lineage_quality.producer.spooled import needs_no_parse, opened
from lineage_quality.producer.troubled import troubled
from lineage_quality.producer.write_through import SinkLatency, WriteThrough

log = logging.getLogger(__name__)

__all__ = ["JOB_GROUP_PREFIX", "Producer"]


class Producer:
    """The producer of one `Settings`: its receiver, `settings.evaluation.workers` workers, and
    what they share (spool, evaluator, forwarder, metrics). Each event's results go to the listeners
    (listeners.py; made by outputs/factory.py's `result_listeners` from `result_sinks`, e.g.
    DataHub, `alerts`, webhooks, and the producer's own parts), after the lineage step
    (`lineage`). `accept`: what the receiver hands each event to, instead of the producer's own
    `intake` (write-through or spool; intake.py)."""

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
        self.metrics.watch(alerts, lineage)
        self.evaluator = evaluator
        self.result_sinks = list(result_sinks)  # e.g. DataHub assertions; never block events
        self.fanout = Fanout(
            lineage,
            result_listeners(
                metrics=self.metrics, verdicts=spool, shared=shared, result_sinks=result_sinks,
                alerts=alerts, lineage=lineage, settings=settings,
            ),
        )  # fmt: skip
        self.forwarder = forwarder
        self.spool = spool
        self.counters = Counters()
        self.runs = Runs(spool, shared)  # for GET /api/v1/runs/{runId}
        self.health = Health(evaluator, spool, warm=settings.evaluation.warm)
        self.receiver = Receiver(
            accept or self._accept,
            settings,
            runs=self.runs.status,
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
            lambda item: self.runs.note(item, -1),
        )
        outbound = self.delivery.outbound
        self.metrics.watch_in_flight(lambda: 0 if outbound is None else outbound.out)
        self._counted = {
            "forwarded": self.metrics.events_forwarded,
            "forward_failures": self.metrics.forward_failures,
            "dead_letters": self.metrics.dead_letters,
            "dead_letters_expired": self.metrics.dead_letters_expired,
        }
        self.write_through = WriteThrough(
            getattr(forwarder, "fast", None),  # a forwarder of tests may have neither
            getattr(forwarder, "latency", None) or SinkLatency(1.0),
            settings.delivery.write_through_below,
            settings.delivery.write_through_timeout,
        )
        self.intake = Intake(
            spool, evaluator, self.write_through, self.metrics, self._count,
            lineage=None if lineage is None else self.fanout.kept_at_once,
        )  # fmt: skip
        self._workers = [
            threading.Thread(target=self._work, name=f"lq-worker-{i}", daemon=True)
            for i in range(max(1, settings.evaluation.workers))
        ]
        self._troubles = Troubles(settings.delivery.poison_after, settings.delivery.retry)
        self.evaluations = Evaluations(
            evaluator, settings, self.metrics, self._stop, self.runs.failed
        )
        self.late = LateResults(
            settings, spool, self.evaluations, self.fanout, self.counters, self._stop.is_set,
            self._cut_by_the_stop,
        )  # fmt: skip

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
        """No new event; the queued ones forwarded for up to `drain_timeout` seconds (no longer
        once the evaluator's JVM is gone: no new one is started while stopping); then each part
        closed within its share of what is left before `deadline` (a `time.monotonic()`),
        left behind past it (shutdown.py). Events not forwarded stay in the spool."""
        step("stopping the receiver")
        self.receiver.stop()
        self._stopping.set()
        self.evaluator.stopping = True  # a JVM that dies now is not replaced
        if drain_timeout:
            step("draining the spool")
            drain(self.spool.wait_empty, self._cut_by_the_stop, drain_timeout)
        self._stop.set()
        self.spool.wake()
        interrupt = getattr(self.forwarder, "interrupt", None)  # a send awaiting Kafka's report
        if callable(interrupt):
            interrupt()
        self.evaluations.cancel_all("cancelled: the producer is stopping")  # events stay spooled
        close_in_turn(parts_of(self._workers, self.forwarder, self.fanout, self.lineage,
                               self.alerts), deadline, step)  # fmt: skip

    def _cut_by_the_stop(self) -> bool:
        """Stopping with the evaluator's JVM gone or going: an evaluation's results would say
        so, not what the data is; its event waits in the spool."""
        return self._stopping.is_set() and not usable(self.evaluator)

    def process(self, body: str) -> str:
        """Evaluate and enrich one event's JSON, waiting as long as it takes; events with nothing
        bound come back unchanged."""
        envelope = Envelope.read(body)
        event = envelope.tree
        if not self._needs_evaluation(envelope):
            marks = self._lineage(envelope)
            if not marks:
                return body
            return rawjson.dumps(enrich(event, {}, self.settings.evaluation.max_added_bytes, marks))
        results = self.evaluator.evaluate(event)
        marks = self.fanout.results(event, results)
        return rawjson.dumps(
            enrich(event, results, self.settings.evaluation.max_added_bytes, marks)
        )

    def _work(self) -> None:
        """A worker: claim an event, handle it, go on with its lane while the spool's lane
        policy keeps it there (spool/lanes.py), then claim afresh."""
        item: SpooledEvent | None = None
        while not self._stop.is_set():
            if item is None:
                item = self.spool.claim(timeout=STOP_POLL)
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
                troubled(item, exc, self._troubles, self.spool, self.evaluator, self.delivery,
                         self.settings, self._stop)  # fmt: skip
            finally:
                if release:
                    if self._stop.is_set():
                        self.spool.release(item.lane)
                    else:
                        following = self.spool.go_on(item.lane)
            item = following

    def _handle(self, item: SpooledEvent) -> bool:
        """Evaluate if needed, forward, delete. False when the lane was handed to a running
        evaluation (a follow-up waiting for its results), which releases it."""
        delivery = self.delivery
        if needs_no_parse(item):  # as received, of a type never evaluated: forward it as it is
            delivery.send(item, item.body, None, item.run_ids, 0)
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
        # the run's waiting COMPLETE count drops in the delete's own transaction; a follow-up
        # (LATE) records nothing: its COMPLETE did
        late = item.kind == LATE
        step = -1 if envelope.complete and not late else 0
        delivery.send(item, body, envelope.tree, [] if late else envelope.run_ids, step)
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
            self.late.evaluate_again(item, event)
            return None
        if not isinstance(event, dict):
            return item.body
        if envelope.event_type == "FAIL":
            self.runs.remember_failure(event)
        if not self._needs_evaluation(envelope):
            marks = self._lineage(envelope)
            if not marks:
                return item.body
            return self._keep(
                item, enrich(event, {}, self.settings.evaluation.max_added_bytes, marks)
            )
        done = reuse(self.shared, event, self.spool, item.id, envelope.run_ids)
        if done is not None:  # redelivered (Kafka): evaluated by a producer already
            return done
        return self._evaluate(item, event, envelope.bound(self.evaluator))

    def _lineage(self, envelope: Envelope) -> Marks:
        """A COMPLETE nothing was evaluated on: its lineage kept, the marks of its outputs."""
        if not envelope.complete or envelope.tree is None:
            return {}
        return self.fanout.lineage_only(envelope.tree)

    def _evaluate(self, item: SpooledEvent, event: dict[str, Any], bound: Any) -> str | None:
        if self._cut_by_the_stop():  # not even started: it waits for the next start
            self._stop.wait(STOP_POLL)
            return None
        evaluation = self.evaluations.start(event, item.id, bound)
        with self.spool.parked(item.lane):  # other runs' events get another worker meanwhile
            in_time = self.evaluations.wait(evaluation)
        if in_time is None or self._cut_by_the_stop():
            return None  # stopping: the event stays in the spool, evaluated again next time
        if in_time:
            return self._finish(item, event, evaluation.final())
        return self.late.timed_out(item, event, evaluation, self._finish)

    def _finish(self, item: SpooledEvent, event: dict[str, Any], results: Results) -> str:
        """The body of an event whose evaluation ended: its results handed to the listeners,
        the facets added, kept in the spool (and the shared store)."""
        marks = self.fanout.results(event, results)
        return self._keep(
            item, enrich(event, results, self.settings.evaluation.max_added_bytes, marks), event
        )

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

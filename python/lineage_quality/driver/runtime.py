"""The in-driver producer: the sidecar's receiver, spool, evaluation and forwarding, inside the
job's Python process, evaluating with a session of the job's own SparkContext.

Differences from `serve`, each for a reason:
- the receiver listens on an ephemeral loopback port with a random API key (only this process's
  listener can post to it);
- events of the evaluation's own Spark work are dropped before the spool (`OwnRunFilter`);
- evaluation uses `newSession()` of the job's session: same SparkContext, catalogs, Hadoop
  credentials and table versions, but our SQL settings (`EVALUATION_SQL_CONF`) do not leak into
  the job's session;
- results are remembered so the end of the job can be gated on them (`GateResults`, a result
  sink after the configured ones);
- at its end the job waits (within `wait_seconds`) for queued alerts to be delivered.

Composed from the producer's public parts: `Producer(accept=...)` takes `OwnRunIntake` in place
of its own intake, `result_sinks=` the outputs made from `Settings.outputs` (outputs/factory.py,
as in `serve`) and the gate.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pyspark.sql import SparkSession

from lineage_quality.contracts import BoundRules
from lineage_quality.driver.gate import Blocking, blocking
from lineage_quality.driver.own_runs import OwnRunFilter
from lineage_quality.driver.upstream_guard import FILE_KEY as GUARD_FILE_KEY
from lineage_quality.engine.quarantine import QuarantineConfig
from lineage_quality.evaluation.evaluator import Evaluator
from lineage_quality.evaluation.reuse import Reuse
from lineage_quality.evaluation.session import EVALUATION_SQL_CONF
from lineage_quality.history.store import HistoryStore
from lineage_quality.lineage.keeper import LineageKeeper
from lineage_quality.producer.alert_sender import AlertSender
from lineage_quality.producer.envelope import Envelope
from lineage_quality.producer.forward import Forwarder
from lineage_quality.producer.outputs.factory import NO_OUTPUTS, Outputs
from lineage_quality.producer.service import JOB_GROUP_PREFIX, Producer
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.spool import Spool
from lineage_quality.results import RuleResult
from lineage_quality.rules.history import DEFAULT_MINIMUMS, HistoryMinimums
from lineage_quality.samples import Sampling
from lineage_quality.values.event import Event
from lineage_quality.values.refs import DatasetRef

log = logging.getLogger(__name__)

EXPIRE_EVERY = 1.0  # seconds between checks for held runs to release


class DriverEvaluator(Evaluator):
    """Evaluates with a new session of the job's SparkContext, made on first use (the job's
    session does not exist yet when `attach` runs)."""

    def __init__(
        self,
        bindings: Sequence[BoundRules],
        quarantine: QuarantineConfig | None = None,
        history: HistoryStore | None = None,
        history_minimums: HistoryMinimums = DEFAULT_MINIMUMS,
        reuse: Reuse | None = None,
        sampling: Sampling | None = None,
    ) -> None:
        super().__init__(
            bindings,
            quarantine=quarantine,
            history=history,
            history_minimums=history_minimums,
            reuse=reuse,
            sampling=sampling,
        )

    @property
    def spark(self) -> SparkSession:
        with self._lock:
            if self._spark is None:
                job = SparkSession.builder.getOrCreate()  # a fresh builder: the running session
                session = job.newSession()
                for key, value in EVALUATION_SQL_CONF.items():
                    session.conf.set(key, value)
                # the upstream guard (upstream="block") refuses the job's reads, not ours: we
                # read what the job wrote, healthy or not, to say so
                session.conf.set(GUARD_FILE_KEY, "")
                self._spark = session
            return self._spark


class OwnRunIntake:
    """What the in-driver receiver hands each event to (`Producer(accept=...)`): the events of
    the evaluation's own Spark work are dropped (`OwnRunFilter`), the others go to the spool
    in their order; runs held past `hold_seconds` are let go by a ticker thread."""

    def __init__(
        self, spool: Spool, hold_seconds: float, on_first_event: Callable[[], None]
    ) -> None:
        self.spool = spool
        self.own_runs: OwnRunFilter[Envelope] = OwnRunFilter(JOB_GROUP_PREFIX, hold_seconds)
        self._lock = threading.Lock()
        self._on_first_event: Callable[[], None] | None = on_first_event
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._expire_held, name="lq-hold", daemon=True)

    def accept(self, body: str, event: Any = None) -> None:
        with self._lock:  # one at a time: a run's events keep their order
            first, self._on_first_event = self._on_first_event, None
            if first is not None:
                first()
            # decoded once: the receiver's parse, kept in the envelope the spool and worker take
            envelope = Envelope.read(body) if event is None else Envelope.of(body, event)
            if not isinstance(envelope.tree, dict):
                self.spool.keep(envelope)
                return
            for item in self.own_runs.offer(envelope.tree, envelope):
                self.spool.keep(item)

    def release_held(self, expired_only: bool = False) -> None:
        with self._lock:
            held = self.own_runs.expire() if expired_only else self.own_runs.flush()
            for envelope in held:
                self.spool.keep(envelope)

    def start(self) -> None:
        self._ticker.start()

    def stop(self) -> None:
        self._stop.set()

    def _expire_held(self) -> None:
        while not self._stop.wait(EXPIRE_EVERY):
            self.release_held(expired_only=True)


class GateResults:
    """A result sink that remembers every result, so the end of the job can be gated on them.
    A provisional (timed-out) result is replaced by the late one: the latest counts."""

    def __init__(self) -> None:
        self._results: dict[tuple[str, str, str], tuple[str, RuleResult]] = {}
        self._lock = threading.Lock()

    def emit(
        self, event: Mapping[str, Any], results: Mapping[DatasetRef, Sequence[RuleResult]]
    ) -> None:
        run = str(Event.of(event).run_id)
        with self._lock:
            for ref, rule_results in results.items():
                for r in rule_results:  # the latest evaluation of a (run, dataset, rule) counts
                    self._results[(run, ref.key, r.rule.id)] = (ref.key, r)

    def close(self) -> None:
        pass

    def results(self) -> list[tuple[str, RuleResult]]:
        with self._lock:
            return list(self._results.values())


class DriverProducer:
    """A `Producer` composed with the in-driver parts: `OwnRunIntake` in front of the spool,
    `GateResults` after the configured result sinks, and the same outputs as `serve`."""

    def __init__(
        self,
        evaluator: Evaluator,
        forwarder: Forwarder,
        spool: Spool,
        settings: Settings,
        hold_seconds: float,
        on_first_event: Callable[[], None],
        outputs: Outputs = NO_OUTPUTS,
        lineage: LineageKeeper | None = None,
    ) -> None:
        self.intake = OwnRunIntake(spool, hold_seconds, on_first_event)
        self.gate = GateResults()
        self.producer = Producer(
            evaluator,
            forwarder,
            spool,
            settings,
            result_sinks=[*outputs.result_sinks, self.gate],  # the gate's after every sink
            alerts=outputs.alerts,
            accept=self.intake.accept,
            lineage=lineage,
        )

    @property
    def spool(self) -> Spool:
        return self.producer.spool

    @property
    def url(self) -> str:
        return self.producer.url

    @property
    def alerts(self) -> AlertSender | None:
        return self.producer.alerts

    def start(self) -> None:
        self.producer.start()
        self.intake.start()

    def stop(self, drain_timeout: float = 0.0) -> None:
        """Stop, after waiting (within `drain_timeout`) for queued alerts to be delivered: the
        process ends next, and the alert outbox would wait for another `attach`."""
        alerts = self.alerts
        if alerts is not None and drain_timeout:
            left = alerts.wait_delivered(drain_timeout)
            if left:
                log.warning(
                    "%d alert(s) not delivered before the end of the job; they stay in %s",
                    left,
                    alerts.outbox.path,
                )
        self.producer.stop(drain_timeout)
        self.intake.stop()

    def release_held(self, expired_only: bool = False) -> None:
        self.intake.release_held(expired_only)

    def results(self) -> list[tuple[str, RuleResult]]:
        return self.gate.results()

    def blocking(self) -> list[Blocking]:
        return blocking(self.results())

"""The in-driver producer: the sidecar's receiver, spool, evaluation and forwarding, inside the
job's Python process, evaluating with a session of the job's own SparkContext.

Differences from `serve`, each for a reason:
- the receiver listens on an ephemeral loopback port with a random API key (only this process's
  listener can post to it);
- events of the evaluation's own Spark work are dropped before the spool (`OwnRunFilter`);
- evaluation uses `newSession()` of the job's session: same SparkContext, catalogs, Hadoop
  credentials and table versions, but our SQL settings (`EVALUATION_SQL_CONF`) do not leak into
  the job's session;
- results are remembered so the end of the job can be gated on them (`finish`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from pyspark.sql import SparkSession

from lineage_quality import rawjson
from lineage_quality.contracts import BoundRules
from lineage_quality.driver.gate import Blocking, blocking
from lineage_quality.driver.own_runs import OwnRunFilter
from lineage_quality.engine.quarantine import QuarantineConfig
from lineage_quality.evaluation.evaluator import EVALUATION_SQL_CONF, Evaluator
from lineage_quality.evaluation.refs import DatasetRef
from lineage_quality.history.store import HistoryStore
from lineage_quality.producer.forward import Forwarder
from lineage_quality.producer.service import JOB_GROUP_PREFIX, Producer
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.spool import Spool
from lineage_quality.results import RuleResult

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
    ) -> None:
        super().__init__(bindings, quarantine=quarantine, history=history)

    @property
    def spark(self) -> SparkSession:
        with self._lock:
            if self._spark is None:
                job = SparkSession.builder.getOrCreate()  # a fresh builder: the running session
                session = job.newSession()
                for key, value in EVALUATION_SQL_CONF.items():
                    session.conf.set(key, value)
                self._spark = session
            return self._spark


class DriverProducer(Producer):
    def __init__(
        self,
        evaluator: Evaluator,
        forwarder: Forwarder,
        spool: Spool,
        settings: Settings,
        hold_seconds: float,
        on_first_event: Callable[[], None],
    ) -> None:
        super().__init__(evaluator, forwarder, spool, settings)
        self.own_runs = OwnRunFilter(JOB_GROUP_PREFIX, hold_seconds)
        self._filter_lock = threading.Lock()
        self._on_first_event: Callable[[], None] | None = on_first_event
        self._results: dict[tuple[str, str, str], tuple[str, RuleResult]] = {}
        self._results_lock = threading.Lock()
        self._ticker = threading.Thread(target=self._expire_held, name="lq-hold", daemon=True)

    def start(self) -> None:
        super().start()
        self._ticker.start()

    def _accept(self, body: str, event: Any = None) -> None:
        with self._filter_lock:  # one at a time: a run's events keep their order
            first, self._on_first_event = self._on_first_event, None
            if first is not None:
                first()
            passed = self.own_runs.offer(rawjson.loads(body) if event is None else event, body)
            for item in passed:
                self.spool.put(item)

    def _expire_held(self) -> None:
        while not self._stop.wait(EXPIRE_EVERY):
            self.release_held(expired_only=True)

    def release_held(self, expired_only: bool = False) -> None:
        with self._filter_lock:
            bodies = self.own_runs.expire() if expired_only else self.own_runs.flush()
            for body in bodies:
                self.spool.put(body)

    def _results_ready(
        self,
        event: Mapping[str, Any],
        results: Mapping[DatasetRef, Sequence[RuleResult]],
        provisional: Collection[DatasetRef] = (),
    ) -> None:
        # A provisional (timed-out) result is replaced by the late one: the latest counts.
        super()._results_ready(event, results, provisional)
        run = str((event.get("run") or {}).get("runId"))
        with self._results_lock:
            for ref, rule_results in results.items():
                for r in rule_results:  # the latest evaluation of a (run, dataset, rule) counts
                    self._results[(run, ref.key, r.rule.id)] = (ref.key, r)

    def results(self) -> list[tuple[str, RuleResult]]:
        with self._results_lock:
            return list(self._results.values())

    def blocking(self) -> list[Blocking]:
        return blocking(self.results())

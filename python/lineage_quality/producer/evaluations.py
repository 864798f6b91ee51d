"""The evaluations a producer has running: each event's evaluation started on its own thread and
Spark job group (evaluation/background.py), waited for up to the deadline, measured, and
cancelled when the producer stops (their events stay in the spool for the next start)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from lineage_quality.evaluation.background import Evaluation
from lineage_quality.evaluation.evaluator import Evaluator
from lineage_quality.producer.metrics import Metrics
from lineage_quality.producer.settings import Settings

JOB_GROUP_PREFIX = "lq-event-"  # every evaluation's Spark job group starts with it
STOP_POLL = 0.5


class Evaluations:
    """Start, wait for and cancel the evaluations of one producer."""

    def __init__(
        self,
        evaluator: Evaluator,
        settings: Settings,
        metrics: Metrics,
        stop: threading.Event,
        run_failed: Callable[[Mapping[str, Any]], bool],
    ) -> None:
        self.evaluator = evaluator
        self.settings = settings
        self.metrics = metrics
        self._stop = stop
        self._run_failed = run_failed  # a FAIL came first: its outputs are not judged
        self._running: dict[str, Evaluation] = {}
        self._lock = threading.Lock()

    def start(self, event: Mapping[str, Any], item_id: int, bound: Any = None) -> Evaluation:
        """The evaluation of `event` (spool item `item_id`), started."""
        group = f"{JOB_GROUP_PREFIX}{item_id}-{uuid.uuid4().hex[:8]}"  # unique in the context
        evaluation = Evaluation(
            self.evaluator,
            event,
            group,
            self.settings.evaluation.cancel_after,
            self.settings.evaluation.kill_after_cancel,
            run_failed=self._run_failed(event),
            bound=bound,
        )
        with self._lock:
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
        with self._lock:
            self._running.pop(group, None)

    def wait(self, evaluation: Evaluation) -> bool | None:
        """True if it ended in time, False past the deadline, None if the producer is stopping."""
        waited = 0.0
        while not self._stop.is_set():
            step = STOP_POLL
            if self.settings.evaluation.timeout is not None:
                step = min(step, self.settings.evaluation.timeout - waited)
            if step <= 0:
                return evaluation.done.is_set()
            if evaluation.done.wait(step):
                return True
            waited += step
        return None

    def wait_forever(self, evaluation: Evaluation) -> bool | None:
        """True once it ended, None if the producer is stopping first."""
        while not self._stop.is_set():
            if evaluation.done.wait(STOP_POLL):
                return True
        return None

    def cancel_all(self, why: str) -> None:
        """Cancel every running evaluation in the background (the producer is stopping)."""
        with self._lock:
            running = list(self._running.values())
        for evaluation in running:
            evaluation.cancel_in_background(why)

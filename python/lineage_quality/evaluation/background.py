"""One event's evaluation, on its own thread and in its own Spark job group, so the producer can
stop waiting for it (the deadline), keep what finished, and cancel the rest of the Spark work.

Results arrive per dataset. `partial()` is what is known now, with every dataset still running
reported as an ERROR result (never a pass); `final()` is the full answer once `done` is set.
Spark work still running `cancel_after` seconds after the start is cancelled; work that ignores
the cancel (java.util.regex never checks for interruption) is ended by killing the evaluator's
own JVM `kill_after_cancel` seconds later, and the next evaluation starts a new one (both from
`Settings`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from lineage_quality.contracts import BoundRules
from lineage_quality.evaluation.evaluator import Evaluator
from lineage_quality.evaluation.reconcile import HIDDEN, visible
from lineage_quality.results import RUN_FAILED, RuleResult, error_result, skipped_result
from lineage_quality.values.event import Event
from lineage_quality.values.refs import DatasetRef

log = logging.getLogger(__name__)

CANCEL_REPEAT_SECONDS = 0.5
RUN_FAILED_MESSAGE = "the run failed (a FAIL event came first): its outputs were not evaluated"


def _errors(groups: list[BoundRules], message: str) -> list[RuleResult]:
    return visible([error_result(rule, message) for group in groups for rule in group.rules])


def _shown(groups: list[BoundRules]) -> bool:
    """Some rule of `groups` is reported (not only a reconciliation's hidden ones)."""
    return any(rule.origin != HIDDEN for group in groups for rule in group.rules)


class Evaluation:
    def __init__(
        self,
        evaluator: Evaluator,
        event: Mapping[str, Any],
        job_group: str,
        cancel_after: float | None,
        kill_after_cancel: float,
        run_failed: bool = False,
        bound: dict[DatasetRef, list[BoundRules]] | None = None,
    ) -> None:
        self.evaluator = evaluator
        self.kill_after_cancel = kill_after_cancel
        self.event = event
        self.job_group = job_group
        self.cancel_after = cancel_after
        # `bound`: what `evaluator.bound(event)` gave, when the caller has it (an event is bound
        # once: producer/envelope.py); a copy, as a failed run's outputs are taken out of it
        self.bound = dict(evaluator.bound(event) if bound is None else bound)
        # A run that FAILed wrote nothing to judge (or half of it): its outputs' rules are
        # reported as skipped, in the run's test facet only; its inputs are evaluated.
        self.not_written: dict[DatasetRef, list[RuleResult]] = {}
        if run_failed:
            for ref in [r for r in self.bound if r.role == "outputs"]:
                self.not_written[ref] = [
                    skipped_result(rule, RUN_FAILED, RUN_FAILED_MESSAGE)
                    for group in self.bound.pop(ref)
                    for rule in group.rules
                    if rule.origin != HIDDEN
                ]
        self.done = threading.Event()
        self.cancelled = False
        self.cancel_reason = ""
        self.error: str | None = None
        self._results: dict[DatasetRef, list[RuleResult]] = {}
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self._thread = threading.Thread(target=self._run, name=f"lq-{job_group}", daemon=True)
        self._timer: threading.Timer | None = None
        if cancel_after is not None:
            reason = f"cancelled after {cancel_after:g}s"
            self._timer = threading.Timer(cancel_after, self.cancel, args=(reason,))
            self._timer.daemon = True

    def start(self) -> Evaluation:
        self._thread.start()
        if self._timer is not None:
            self._timer.start()
        return self

    def _run(self) -> None:
        started = time.monotonic()
        try:
            for ref, results in self.evaluator.evaluate_each(
                self.event, self.job_group, self.bound
            ):
                with self._lock:
                    if self.cancelled:
                        break  # the rest would be thrown away
                    self._results[ref] = results
        except Exception as exc:
            log.exception("evaluation %s failed", self.job_group)
            self.error = f"evaluation failed: {exc}"
        finally:
            if self._timer is not None:
                self._timer.cancel()
            with self._lock:
                self.done.set()
                callbacks, self._callbacks = self._callbacks, []
            log.info(
                "evaluated %d rule(s) on %d dataset(s) of %s in %.2fs%s",
                sum(len(r) for r in self._results.values()),
                len(self._results),
                Event.of(self.event).job_name,
                time.monotonic() - started,
                " (cancelled)" if self.cancelled else "",
            )
            for callback in callbacks:
                self._call(callback)

    def _call(self, callback: Callable[[], None]) -> None:
        try:
            callback()
        except Exception:
            log.exception("handling the end of evaluation %s failed", self.job_group)

    def when_done(self, callback: Callable[[], None]) -> None:
        """Run `callback` once the evaluation has ended (now, if it already has)."""
        with self._lock:
            if not self.done.is_set():
                self._callbacks.append(callback)
                return
        self._call(callback)

    def cancel(self, reason: str = "cancelled") -> None:
        """Stop the Spark work. Runs until the evaluation returns: the engine may start another
        job in the group after a cancel (it retries metrics one by one), so cancel again."""
        with self._lock:
            if self.done.is_set() or self.cancelled:
                return
            self.cancelled = True
            self.cancel_reason = reason
        log.warning("evaluation %s %s: cancelling its Spark jobs", self.job_group, reason)
        started = time.monotonic()
        killed = False
        while True:
            try:
                self.evaluator.cancel(self.job_group)
            except Exception:
                log.exception("could not cancel Spark job group %s", self.job_group)
            self.done.wait(CANCEL_REPEAT_SECONDS)
            # Done is not enough: a cancelled task that ignores interruption (java.util.regex)
            # keeps running, and its core busy, after its job has failed.
            if self.done.is_set() and (killed or not self._tasks_running()):
                return
            if not killed and time.monotonic() - started > self.kill_after_cancel:
                killed = self.evaluator.kill()
                if killed:
                    log.error(
                        "evaluation %s still running %.0fs after its cancel (work that ignores "
                        "interruption): killed the evaluator's JVM; the next evaluation starts "
                        "a new one",
                        self.job_group,
                        self.kill_after_cancel,
                    )
                elif self.done.is_set():
                    return  # not our JVM to kill: nothing more to do

    def _tasks_running(self) -> bool:
        try:
            return self.evaluator.tasks_running(self.job_group)
        except Exception:
            return False  # the JVM is gone: nothing runs

    def cancel_in_background(self, reason: str) -> None:
        threading.Thread(
            target=self.cancel, args=(reason,), name=f"lq-cancel-{self.job_group}", daemon=True
        ).start()

    def partial(self, message: str) -> tuple[dict[DatasetRef, list[RuleResult]], list[DatasetRef]]:
        """The results known now, every other bound dataset's rules as ERROR `message`; and the
        datasets that had no result yet."""
        with self._lock:
            known = dict(self._results)
        late = [ref for ref, groups in self.bound.items() if ref not in known and _shown(groups)]
        out = {
            ref: known.get(ref) or _errors(groups, message) for ref, groups in self.bound.items()
        }
        out.update(self.not_written)
        return out, late

    def final(self) -> dict[DatasetRef, list[RuleResult]]:
        """Every bound dataset's results once done; what could not run is an ERROR."""
        if self.cancelled:
            message = f"evaluation {self.cancel_reason}"
        else:
            message = self.error or "evaluation ended without a result"
        return self.partial(message)[0]

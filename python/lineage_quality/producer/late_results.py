"""An evaluation that passed its deadline (`--evaluation-timeout`): the event goes on with the
datasets not evaluated yet as ERROR results, and a follow-up event of the same run (`eventType`
`late_event_type`, OTHER by default) carries their real results when the evaluation ends.

The follow-up is stored in the spool, in the run's lane right after the timed-out event, before
that event is forwarded (`Spool.hand_over`): it goes out after it, later events of the run wait
behind it, and a restart evaluates it again (`evaluate_again`). Until its results are in, the
follow-up is held; they replace its body, then it is released like any event.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Mapping
from typing import Any

from lineage_quality import rawjson
from lineage_quality.evaluation.background import Evaluation
from lineage_quality.producer.counters import Counters
from lineage_quality.producer.enrich import enrich
from lineage_quality.producer.evaluations import Evaluations
from lineage_quality.producer.events import late_skeleton, now_iso
from lineage_quality.producer.listeners import Fanout, Results
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.spool import Spool, SpooledEvent
from lineage_quality.values.event import Event
from lineage_quality.values.refs import DatasetRef

log = logging.getLogger(__name__)

# The body to forward for an event whose evaluation ended: (item, event, results) -> its text.
Finish = Callable[[SpooledEvent, dict[str, Any], Results], str]


class LateResults:
    """The timed-out path of one producer."""

    def __init__(
        self,
        settings: Settings,
        spool: Spool,
        evaluations: Evaluations,
        fanout: Fanout,
        counters: Counters,
        stopping: Callable[[], bool],
        cut: Callable[[], bool] = lambda: False,
    ) -> None:
        self.settings = settings
        self.spool = spool
        self.evaluations = evaluations
        self.fanout = fanout
        self.counters = counters
        self._stopping = stopping
        self._cut = cut  # stopping with the evaluator's JVM gone: results would not be the data's

    def timed_out(
        self, item: SpooledEvent, event: dict[str, Any], evaluation: Evaluation, finish: Finish
    ) -> str | None:
        """`event`'s body to forward now, its late datasets as ERROR, their follow-up stored
        (or, when it cannot be, the full results after waiting; None if stopping meanwhile)."""
        message = f"evaluation timed out after {self.settings.evaluation.timeout:g}s"
        results, late = evaluation.partial(message)
        if not late:  # every dataset finished just now
            return finish(item, event, evaluation.final())
        self.counters.add("timeouts")
        log.warning(
            "event %d (%s): %s; forwarding it with %d dataset(s) as ERROR, their results follow "
            "in an %s event",
            item.id, Event.of(event).job_name, message, len(late),
            self.settings.evaluation.late_event_type,
        )  # fmt: skip
        marks = self.fanout.results(event, results, provisional=late)
        body = rawjson.dumps(
            enrich(event, results, self.settings.evaluation.max_added_bytes, marks)
        )
        skeleton, mapping = late_skeleton(event, late, self.settings.evaluation.late_event_type)
        try:
            late_id = self.spool.hand_over(item.id, body, rawjson.dumps(skeleton))
        except sqlite3.Error as exc:
            # Without the follow-up stored, the event waits for its evaluation after all.
            log.error("could not store the follow-up of event %d (%s); waiting", item.id, exc)
            with self.spool.parked(item.lane):
                if self.evaluations.wait_forever(evaluation) is None:
                    return None
            return finish(item, event, evaluation.final())
        self.counters.add("late")
        evaluation.when_done(
            lambda: self._deliver(
                late_id, skeleton, mapping, evaluation, lambda: self.spool.unhold(late_id)
            )
        )
        return body

    def evaluate_again(self, item: SpooledEvent, skeleton: dict[str, Any]) -> None:
        """A follow-up whose evaluation did not finish before a restart: evaluate it again; its
        lane is released once its results are in."""
        evaluation = self.evaluations.start(skeleton, item.id)
        mapping = {ref: ref for ref in evaluation.bound}
        evaluation.when_done(
            lambda: self._deliver(
                item.id, skeleton, mapping, evaluation, lambda: self.spool.release(item.lane)
            )
        )

    def _deliver(
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
            if (self._stopping() and evaluation.cancelled) or self._cut():
                return  # cut by stop(): evaluated again after the restart
            results = evaluation.final()
            late = {mapping[ref]: r for ref, r in results.items() if ref in mapping}
            self.fanout.results(skeleton, late, late=True)
            event = {**skeleton, "eventTime": now_iso()}
            enriched = enrich(event, late, self.settings.evaluation.max_added_bytes)
            self.spool.replace(late_id, rawjson.dumps(enriched))
            log.info("late results of %d dataset(s) ready as event %d", len(late), late_id)
        except Exception:
            log.exception("could not store the late results of event %d", late_id)
        finally:
            release()

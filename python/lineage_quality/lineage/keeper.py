"""`LineageKeeper`: what the producer (serve, and later the in-driver mode) does along lineage
with each COMPLETE event and its verdicts: keep the run's lineage and its outputs' health in the
store, and say which outputs (and columns) are marked by a failure upstream (step.py).

A store that cannot be read or written costs the marks of that event, never the event: the
failure is logged and counted (`failures`), and the event goes on with its own verdicts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from lineage_quality.lineage.critical import Critical, never
from lineage_quality.lineage.model import Mark
from lineage_quality.lineage.observe import by_key, evaluated, failures_of
from lineage_quality.lineage.policy import Upstream
from lineage_quality.lineage.step import observe
from lineage_quality.lineage.store import LineageStore
from lineage_quality.results import RuleResult
from lineage_quality.values.event import Event
from lineage_quality.values.refs import DatasetRef

log = logging.getLogger(__name__)


class LineageKeeper:
    def __init__(
        self, store: LineageStore, policy: Upstream = Upstream.WARN, critical: Critical = never
    ) -> None:
        self.store = store
        self.policy = policy
        self.critical = critical  # which datasets' contracts mark them critical (alerts)
        self.failures = 0  # events whose lineage could not be kept
        self.on_failed: Callable[[], None] | None = None  # e.g. a metric's inc
        # after an event's lineage is kept: the in-driver upstream guard looks again at once
        self.on_kept: Callable[[], None] | None = None

    def keep(
        self,
        event: Mapping[str, Any],
        results: Mapping[DatasetRef, Sequence[RuleResult]],
        provisional: Collection[DatasetRef] = (),
    ) -> dict[DatasetRef, tuple[Mark, ...]]:
        """Keep the lineage and health of a COMPLETE `event` with its verdicts `results`; the
        marks of its outputs. `provisional`: datasets whose verdicts are timeouts (their real
        ones come to `late`)."""
        if self.policy is Upstream.OFF:
            return {}
        try:
            observed = observe(
                event,
                results,
                self.store.written,
                self.policy,
                self.store.bounds.max_marks,
                provisional,
            )
        except Exception as exc:
            self._failed("read the health of the inputs", exc)
            return {}
        try:
            self.store.record(observed)
        except Exception as exc:
            self._failed("keep the lineage", exc)
        else:
            self._kept()
        return observed.marks_by_ref(event)

    def late(
        self, event: Mapping[str, Any], results: Mapping[DatasetRef, Sequence[RuleResult]]
    ) -> None:
        """The verdicts of outputs whose evaluation passed its deadline, now known."""
        if self.policy is Upstream.OFF:
            return
        run = Event.of(event).run_id
        if run is None:
            return
        try:
            for dataset, verdicts in by_key(results, "outputs").items():
                self.store.evaluated_late(dataset, run, failures_of(verdicts), evaluated(verdicts))
        except Exception as exc:
            self._failed("keep the late verdicts", exc)
        else:
            self._kept()

    def _kept(self) -> None:
        if self.on_kept is not None:
            try:
                self.on_kept()
            except Exception as exc:  # the guard's trouble is not the event's
                log.warning("after keeping the lineage: %s", exc)

    def _failed(self, what: str, exc: Exception) -> None:
        self.failures += 1
        if self.on_failed is not None:
            self.on_failed()
        log.warning("could not %s of an event (%s); its outputs are not marked", what, exc)

    def close(self) -> None:
        self.store.close()

"""What the producer knows of runs, for `GET /api/v1/runs/{runId}` (and so `gate --run-id`):
which runs have a COMPLETE waiting, their verdicts (the spool's, or every producer's from the
shared store), and which runs FAILed (their outputs are not judged)."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Mapping
from typing import Any

from lineage_quality import rawjson
from lineage_quality.producer.run_verdicts import blocking
from lineage_quality.producer.shared_runs import SharedRuns, verdicts_of
from lineage_quality.producer.spool import Spool, SpooledEvent
from lineage_quality.producer.spooled import opened
from lineage_quality.values.event import Event

log = logging.getLogger(__name__)


class Runs:
    """The runs of one producer's spool (and of the shared store, when there is one)."""

    def __init__(self, spool: Spool, shared: SharedRuns | None) -> None:
        self.spool = spool
        self.shared = shared

    def note(self, item: SpooledEvent, step: int) -> None:
        """Keep the runs API informed: a COMPLETE of the run waits (+1) or was handled (-1); any
        other event just makes the run known."""
        envelope = opened(item)
        if not envelope.run_ids:
            return
        try:
            self.spool.run_seen(envelope.run_ids, step if envelope.complete else 0)
        except sqlite3.Error as exc:
            log.warning("could not record the run of an event: %s", exc)

    def status(self, run_id: str) -> tuple[int, dict[str, Any]]:
        """What `GET /api/v1/runs/{runId}` answers: 404 unknown, 202 while a COMPLETE of the run
        (or of a child run) waits, else 200 with every verdict and the failed BLOCK rules."""
        report = self.spool.run_report(run_id)
        shared = verdicts_of(self.shared, run_id)  # every producer's, with a shared store
        if report is None and shared is None:
            return 404, {"runId": run_id, "status": "unknown"}
        pending, bodies = report or (0, [])
        rows = shared or [row for body in bodies for row in json.loads(body)]
        if pending > 0:
            return 202, {"runId": run_id, "status": "pending", "pendingEvents": pending}
        return 200, {
            "runId": run_id,
            "status": "evaluated",
            "verdicts": rows,
            "blocking": blocking(rows),
        }

    def remember_failure(self, event: Mapping[str, Any]) -> None:
        """A FAIL event's run: its outputs are not judged when its COMPLETE comes after all."""
        run_id = Event.of(event).run_id
        if run_id is not None:
            run_id = rawjson.storable(run_id)
            try:
                self.spool.mark_run_failed(run_id)
            except sqlite3.Error as exc:
                log.warning("could not remember that run %s failed: %s", run_id, exc)

    def failed(self, event: Mapping[str, Any]) -> bool:
        """`event`'s run FAILed before (as far as the spool remembers)."""
        run_id = Event.of(event).run_id
        try:
            return run_id is not None and self.spool.run_failed(rawjson.storable(run_id))
        except sqlite3.Error:
            return False

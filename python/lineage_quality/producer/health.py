"""What `/readyz` answers for one producer (receiver/routes.py): whether it can take and evaluate
events.

Ready means: the spool can be written now (a write transaction on its own connection, within a
second) and is under its bounds; and the evaluator is ready when it has rules to run: its Spark
session is up (`warm`: started in the background when the producer starts) and its JVM alive. A
dead JVM is replaced in the background; /readyz answers 503 until then.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from typing import TYPE_CHECKING, Any

from lineage_quality.errors import SparkStartError
from lineage_quality.producer.spool import Spool

if TYPE_CHECKING:
    from lineage_quality.evaluation.evaluator import Evaluator

log = logging.getLogger(__name__)


def spool_writable(spool: Spool) -> str | None:
    """None when the spool can take an event now, else why not."""
    try:
        db = sqlite3.connect(str(spool.path), timeout=1.0, isolation_level=None)
        try:
            db.execute("BEGIN IMMEDIATE")
            db.execute("ROLLBACK")
        finally:
            db.close()
    except sqlite3.Error as exc:
        return f"spool not writable: {exc}"
    events, size = spool.usage()
    if (spool.max_events and events >= spool.max_events) or (
        spool.max_bytes and size >= spool.max_bytes
    ):
        return f"spool full ({events} events, {size} bytes)"
    return None


class Health:
    def __init__(self, evaluator: Evaluator, spool: Spool, warm: bool = False) -> None:
        self.evaluator = evaluator
        self.spool = spool
        self.warm = warm and bool(getattr(evaluator, "bindings", None))
        self._starting: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        if self.warm:
            self._start_session()

    def _start_session(self) -> None:
        with self._lock:
            if self._starting is not None and self._starting.is_alive():
                return
            self._starting = threading.Thread(
                target=self._session, name="lq-evaluator-start", daemon=True
            )
            self._starting.start()

    def _session(self) -> None:
        try:
            self.evaluator.spark  # noqa: B018 (starts, or replaces a dead JVM)
        except SparkStartError as exc:
            log.error("%s", exc)  # one line: what Spark answered, not our traceback
        except Exception:
            log.exception("could not start the evaluator's Spark session")

    def evaluator_problem(self) -> str | None:
        if not getattr(self.evaluator, "bindings", None):
            return None  # nothing to evaluate: the evaluator is not needed
        if self.evaluator.jvm_died():
            self._start_session()
            return "evaluator JVM died; starting a new one"
        if self.warm and not self.evaluator.started:
            return "evaluator starting"
        return None

    def ready(self) -> tuple[bool, dict[str, Any]]:
        problems = [p for p in (spool_writable(self.spool), self.evaluator_problem()) if p]
        return not problems, {
            "status": "ready" if not problems else "not ready",
            "problems": problems,
        }

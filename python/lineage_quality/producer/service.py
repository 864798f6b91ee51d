"""The producer: receiver -> spool -> (evaluate, enrich on COMPLETE) -> forward."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

from lineage_quality.producer.enrich import enrich
from lineage_quality.producer.evaluator import Evaluator
from lineage_quality.producer.forward import Forwarder
from lineage_quality.producer.receiver import Receiver
from lineage_quality.producer.result_sinks import ResultSink, close_sinks, emit_results
from lineage_quality.producer.spool import Spool, SpooledEvent

log = logging.getLogger(__name__)

EVALUATED_TYPES = frozenset({"COMPLETE"})
MAX_BACKOFF = 30.0


class Producer:
    def __init__(
        self,
        evaluator: Evaluator,
        forwarder: Forwarder,
        spool: Spool,
        host: str = "127.0.0.1",
        port: int = 5055,
        api_key: str | None = None,
        max_body: int | None = None,
        result_sinks: Sequence[ResultSink] = (),
    ) -> None:
        self.evaluator = evaluator
        self.result_sinks = list(result_sinks)  # e.g. DataHub assertions; never block events
        self.forwarder = forwarder
        self.spool = spool
        kwargs: dict[str, Any] = {"host": host, "port": port, "api_key": api_key}
        if max_body is not None:
            kwargs["max_body"] = max_body
        self.receiver = Receiver(self._accept, **kwargs)
        self._stop = threading.Event()
        self._worker = threading.Thread(target=self._run, name="lq-worker", daemon=True)
        self.forwarded = 0

    def _accept(self, body: str) -> None:
        self.spool.put(body)  # durable before the receiver answers 201

    @property
    def url(self) -> str:
        return self.receiver.url

    def start(self) -> None:
        self._worker.start()
        self.receiver.start()
        log.info("listening on %s/api/v1/lineage", self.url)

    def stop(self, drain_timeout: float = 0.0) -> None:
        self.receiver.stop()
        if drain_timeout:
            self.spool.wait_empty(drain_timeout)
        self._stop.set()
        self.spool.wake()
        self._worker.join(timeout=10)
        self.forwarder.close()
        close_sinks(self.result_sinks)

    def process(self, body: str) -> str:
        """Evaluate and enrich one event's JSON; events with nothing bound come back unchanged."""
        event = json.loads(body)
        if not isinstance(event, dict) or event.get("eventType") not in EVALUATED_TYPES:
            return body
        if not self.evaluator.bound(event):
            return body
        started = time.monotonic()
        results = self.evaluator.evaluate(event)
        log.info(
            "evaluated %d rule(s) on %d dataset(s) of %s in %.2fs",
            sum(len(r) for r in results.values()),
            len(results),
            (event.get("job") or {}).get("name"),
            time.monotonic() - started,
        )
        emit_results(self.result_sinks, event, results)
        return json.dumps(enrich(event, results))

    def _handle(self, item: SpooledEvent) -> None:
        body = item.body
        if not item.enriched:
            try:
                body = self.process(body)
            except Exception:
                log.exception("could not evaluate event %d; forwarding it unchanged", item.id)
            self.spool.replace(item.id, body)
        self.forwarder.send(json.loads(body))

    def _run(self) -> None:
        backoff = 0.5
        while not self._stop.is_set():
            item = self.spool.next(timeout=0.5)
            if item is None:
                continue
            try:
                self._handle(item)
            except Exception as exc:
                self.spool.attempted(item.id)
                log.warning(
                    "forwarding event %d failed (attempt %d): %s; retrying in %.1fs",
                    item.id,
                    item.attempts + 1,
                    exc,
                    backoff,
                )
                self._stop.wait(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF)
                continue
            backoff = 0.5
            self.spool.done(item.id)
            self.forwarded += 1

"""A worker's event whose handling raised (not its sink): dead-lettered once it failed
`poison_after` times in a row (poison.py counts; its run kept unjudged so `gate` never passes
it), else retried after a back-off, its lane parked meanwhile so other runs go on."""

from __future__ import annotations

import logging
import threading
from typing import Any

from lineage_quality.producer.forward import Delivery
from lineage_quality.producer.poison import Troubles, describe, keep_unjudged
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.spool import LATE, Spool, SpooledEvent
from lineage_quality.producer.spooled import opened

log = logging.getLogger(__name__)


def troubled(
    item: SpooledEvent,
    exc: Exception,
    troubles: Troubles,
    spool: Spool,
    evaluator: Any,
    delivery: Delivery,
    settings: Settings,
    stop: threading.Event,
) -> None:
    """Handling `item` raised `exc`: dead-letter it, or wait and try again."""
    failures, backoff = troubles.failed(item.id, exc)
    if backoff is None:
        log.error(
            "event %d could not be handled (%s, %d time(s)); moving it to the dead letters",
            item.id, describe(exc), failures, exc_info=exc,
        )  # fmt: skip
        reason = f"could not be handled: {describe(exc)}"
        if not item.enriched and item.kind != LATE:  # its run must not pass `gate` now
            keep_unjudged(spool, evaluator, opened(item).tree, reason)
        if delivery.bury(item, reason):
            return
        backoff = settings.delivery.retry.maximum  # not even buried (a full disk): wait
    log.warning(
        "unexpected error handling event %d (%s); retrying it in %.1fs (%d of %d)",
        item.id, describe(exc), backoff, failures, settings.delivery.poison_after, exc_info=exc,
    )  # fmt: skip
    with spool.parked(item.lane):
        stop.wait(backoff)

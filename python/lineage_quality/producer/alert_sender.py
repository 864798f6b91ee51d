"""Delivers the outbox's alerts to their webhooks on a thread of its own, so a slow or dead
webhook never holds up lineage forwarding. A failed POST (no answer, or not 2xx) is retried with
exponential back-off up to `retry_max` seconds between tries, for as long as it takes."""

from __future__ import annotations

import logging
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence

import attrs

from lineage_quality.producer.alert_outbox import AlertOutbox, PendingAlert
from lineage_quality.producer.alerts import GENERIC

log = logging.getLogger(__name__)

POST_TIMEOUT = 10.0


@attrs.frozen
class Webhook:
    url: str
    kind: str = GENERIC  # GENERIC or SLACK

    @property
    def name(self) -> str:
        """The outbox's key for this sink (stable across restarts)."""
        return f"{self.kind} {self.url}"

    @property
    def label(self) -> str:
        """What logs and metrics show: Slack webhook URLs are secrets, so scheme and host only."""
        parts = urllib.parse.urlsplit(self.url)
        return f"{self.kind}:{parts.scheme}://{parts.hostname or ''}"


def post_json(url: str, body: str, timeout: float = POST_TIMEOUT) -> None:
    """POST; raises unless the answer is 2xx."""
    request = urllib.request.Request(
        url,
        data=body.encode(),
        headers={"Content-Type": "application/json", "User-Agent": "lineage-quality"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        response.read()


class AlertSender:
    def __init__(
        self,
        outbox: AlertOutbox,
        webhooks: Sequence[Webhook],
        *,
        retry_initial: float = 1.0,
        retry_max: float = 300.0,
        on_sent: Callable[[str], None] = lambda label: None,
        on_failed: Callable[[str], None] = lambda label: None,
        post: Callable[[str, str], None] = post_json,
    ) -> None:
        self.outbox = outbox
        self.webhooks = {w.name: w for w in webhooks}
        self.retry_initial = retry_initial
        self.retry_max = retry_max
        self.on_sent = on_sent
        self.on_failed = on_failed
        self._post = post
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lq-alerts", daemon=True)

    @property
    def sinks(self) -> list[tuple[str, str]]:
        """(name, kind) of each webhook, as `AlertOutbox.offer` takes them."""
        return [(w.name, w.kind) for w in self.webhooks.values()]

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self.outbox.changed.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                for item in self.outbox.due():
                    if self._stop.is_set():
                        return
                    self._deliver(item)
                wait = 1.0
                next_due = self.outbox.next_due()
                if next_due is not None:
                    wait = min(wait, max(0.0, next_due - time.time()))
            except Exception:
                log.exception("alert delivery loop failed; trying again")
                wait = 1.0
            self.outbox.changed.wait(wait)
            self.outbox.changed.clear()

    def _deliver(self, item: PendingAlert) -> None:
        webhook = self.webhooks.get(item.sink)
        if webhook is None:  # configured in an earlier run, not now: keep it for when it is
            self.outbox.retry_at(item.rowid, time.time() + self.retry_max)
            return
        try:
            self._post(webhook.url, item.body)
        except Exception as exc:
            backoff = min(self.retry_initial * 2 ** min(item.attempts, 20), self.retry_max)
            self.outbox.retry_at(item.rowid, time.time() + backoff)
            self.on_failed(webhook.label)
            log.warning(
                "alert to %s failed (attempt %d): %s; retrying in %.1fs",
                webhook.label,
                item.attempts + 1,
                _short(exc),
                backoff,
            )
            return
        self.outbox.delivered(item.rowid)
        self.on_sent(webhook.label)
        log.info("alert delivered to %s", webhook.label)


def _short(exc: Exception) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code}"
    text = str(exc).strip().splitlines()
    return (text[0][:200] if text else "") or type(exc).__name__

"""Delivers the outbox's alerts to their webhooks on a thread of its own, so a slow or dead
webhook never holds up lineage forwarding. A failed POST (no answer, 408, 429, 5xx) is retried
with the alerts' back-off (`backoff.ALERT_BACKOFF`: 1 s doubling to 5 minutes between tries), for
as long as it takes. An answer refusing it for good (any other 4xx, e.g. a message Slack cannot
take) is retried the same way up to `AlertBounds.dead_letter_after` times in a row, then the alert
is dead-lettered in the outbox: the outbox drains, and nothing is lost."""

from __future__ import annotations

import logging
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence

import attrs

from lineage_quality.bounds import AlertBounds
from lineage_quality.producer.alert_outbox import AlertOutbox, PendingAlert
from lineage_quality.producer.alerts import GENERIC
from lineage_quality.producer.backoff import ALERT_BACKOFF, Backoff, refused_for_good, status_of

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
        retry_initial: float = ALERT_BACKOFF.initial,
        retry_max: float = ALERT_BACKOFF.maximum,
        dead_letter_after: int = AlertBounds().dead_letter_after,
        on_sent: Callable[[str], None] = lambda label: None,
        on_failed: Callable[[str], None] = lambda label: None,
        post: Callable[[str, str], None] = post_json,
    ) -> None:
        self.outbox = outbox
        self.webhooks = {w.name: w for w in webhooks}
        self.backoff = Backoff(initial=retry_initial, maximum=retry_max)
        self.dead_letter_after = dead_letter_after
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

    def wait_delivered(self, timeout: float) -> int:
        """Wait (at most `timeout` seconds) until no alert waits for delivery; how many still
        do (the in-driver end of the job: the process ends next)."""
        deadline = time.monotonic() + timeout
        while True:
            left = self.outbox.pending()
            if not left or time.monotonic() >= deadline:
                return left
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))

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
            self.outbox.retry_at(item.rowid, time.time() + self.backoff.maximum)
            return
        try:
            self._post(webhook.url, item.body)
        except Exception as exc:
            self.on_failed(webhook.label)
            refused = refused_for_good(exc)
            if refused and self.dead_letter_after and item.refusals + 1 >= self.dead_letter_after:
                reason = f"refused {item.refusals + 1} times: {_short(exc)}"
                self.outbox.dead_letter(item.rowid, reason)
                log.error(
                    "alert to %s moved to the dead letters (`lineage-quality dead-letters list "
                    "--alerts --spool ...`): %s",
                    webhook.label,
                    reason,
                )
                return
            backoff = self.backoff.delay(item.attempts)
            self.outbox.retry_at(item.rowid, time.time() + backoff, refused=refused)
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
    status = status_of(exc)
    if status is not None:
        return f"HTTP {status}"
    text = str(exc).strip().splitlines()
    return (text[0][:200] if text else "") or type(exc).__name__

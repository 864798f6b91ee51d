"""Prometheus metrics of one producer (`GET /metrics`).

Each Producer has its own registry (several producers in one process, e.g. tests or the in-driver
mode, never mix their numbers); nothing is registered at import time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import generate_latest

from lineage_quality.facets.assertions import facet_severity
from lineage_quality.results import RuleResult

# Evaluations take from under a second (small files) to many minutes (big tables).
EVALUATION_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, float("inf"))

# Refusal reasons by HTTP status: a small fixed set of label values.
REFUSAL_REASONS = {
    400: "bad_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    411: "length_required",
    413: "too_large",
    415: "unsupported_media_type",
    501: "not_implemented",
    503: "unavailable",
}


def refusal_reason(status: int) -> str:
    return REFUSAL_REASONS.get(status, "other")


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.events_received = Counter(
            "lineage_quality_events_received",
            "Events accepted (stored in the spool, answered 201)",
            registry=r,
        )
        self.events_forwarded = Counter(
            "lineage_quality_events_forwarded", "Events the sink took", registry=r
        )
        self.events_refused = Counter(
            "lineage_quality_events_refused",
            "Requests to the lineage endpoint answered with an error, by reason",
            ["reason"],
            registry=r,
        )
        self.forward_failures = Counter(
            "lineage_quality_forward_failures", "Failed attempts to forward an event", registry=r
        )
        self.dead_letters = Counter(
            "lineage_quality_dead_letters", "Events moved to the dead letters", registry=r
        )
        self.evaluations = Counter(
            "lineage_quality_evaluations",
            "Evaluations of an event's bound datasets that ended, by outcome",
            ["outcome"],
            registry=r,
        )
        self.evaluation_seconds = Histogram(
            "lineage_quality_evaluation_seconds",
            "Seconds from the start of an event's evaluation to its end",
            buckets=EVALUATION_BUCKETS,
            registry=r,
        )
        self.assertions = Counter(
            "lineage_quality_assertions",
            "Rule results attached to forwarded events, by result, severity and action",
            ["result", "severity", "action"],
            registry=r,
        )
        self.alerts_sent = Counter(
            "lineage_quality_alerts_sent", "Alerts a webhook took (2xx)", ["sink"], registry=r
        )
        self.alerts_failed = Counter(
            "lineage_quality_alerts_failed",
            "Failed attempts to deliver an alert (retried later)",
            ["sink"],
            registry=r,
        )
        self.spool_events = Gauge(
            "lineage_quality_spool_events", "Events in the spool, not yet forwarded", registry=r
        )
        self.spool_bytes = Gauge(
            "lineage_quality_spool_bytes", "Bytes of the events in the spool", registry=r
        )
        self.alerts_pending = Gauge(
            "lineage_quality_alerts_pending", "Alerts waiting for delivery", registry=r
        )

    def watch_spool(self, usage: Callable[[], tuple[int, int]]) -> None:
        """Read the spool's (events, bytes) at each scrape."""
        self.spool_events.set_function(lambda: float(usage()[0]))
        self.spool_bytes.set_function(lambda: float(usage()[1]))

    def watch_alerts(self, pending: Callable[[], int]) -> None:
        self.alerts_pending.set_function(lambda: float(pending()))

    def count_results(self, results: Mapping[Any, Sequence[RuleResult]]) -> None:
        for rule_results in results.values():
            for r in rule_results:
                self.assertions.labels(
                    result=r.status.value,
                    severity=facet_severity(r) or "none",
                    action=r.rule.effective_action.value,
                ).inc()

    def exposition(self) -> tuple[bytes, str]:
        """The text format body and its Content-Type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST

"""Prometheus metrics of one producer (`GET /metrics`).

Each Producer has its own registry (several producers in one process, e.g. tests or the in-driver
mode, never mix their numbers); nothing is registered at import time.

Per-rule series (`lineage_quality_rule_*`, docs/metrics.md) are labelled by contract, contract
object and rule id, all taken from the contracts the producer loaded, never from an event: a glob
binding 10,000 datasets is one `dataset` label (its object's name), and a rule no contract holds
gets no series. Their number is bounded by the rules loaded, whatever the events name.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import generate_latest

from lineage_quality.evaluation.written import completed_ms
from lineage_quality.facets.assertions import facet_severity
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Rule

if TYPE_CHECKING:
    from lineage_quality.contracts import BoundRules
    from lineage_quality.lineage.keeper import LineageKeeper
    from lineage_quality.producer.alert_sender import AlertSender

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


# From a COMPLETE's eventTime to its verdicts: the evaluation itself plus the time the event
# waited (spool, a busy worker, a slow listener clock).
LAG_BUCKETS = (1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 86400, float("inf"))

RULE_LABELS = ("contract", "dataset", "rule")
STATUSES = tuple(s.value for s in Status)


def refusal_reason(status: int) -> str:
    return REFUSAL_REASONS.get(status, "other")


class RuleLabels:
    """(contract, object name, rule id) of each rule the producer loaded: the only label values
    the per-rule series take. A result's rule is the contract's own object (the evaluator passes
    them through), so identity finds it; equality is the fallback."""

    def __init__(self, bindings: Sequence[BoundRules]) -> None:
        self._by_identity: dict[int, tuple[Rule, tuple[str, str, str]]] = {}
        self._by_value: dict[Rule, tuple[str, str, str]] = {}
        for binding in bindings:
            for rule in binding.rules:
                labels = (binding.contract, binding.object_name, rule.id)
                self._by_identity.setdefault(id(rule), (rule, labels))
                try:
                    self._by_value.setdefault(rule, labels)
                except TypeError:  # a parameter value that cannot be hashed: identity only
                    continue

    def __call__(self, rule: Rule) -> tuple[str, str, str] | None:
        found = self._by_identity.get(id(rule))
        if found is not None and found[0] is rule:
            return found[1]
        try:
            return self._by_value.get(rule)
        except TypeError:
            return None


def _gauge_value(result: RuleResult) -> float:
    """The measured value in the rule's unit; NaN (Prometheus' "no value") when there is none,
    so an error after a pass never leaves the old number standing."""
    actual = result.actual
    if actual is None or isinstance(actual, bool):
        return math.nan
    return float(actual) if math.isfinite(actual) else math.nan


def lag_seconds(event: Mapping[str, Any], now: float) -> float | None:
    """Seconds from the event's eventTime to `now`; None without a usable time. A listener
    clock ahead of ours counts as no lag, not a negative one."""
    completed = completed_ms(event)
    if completed is None:
        return None
    return max(0.0, now - completed / 1000)


class Metrics:
    def __init__(self, bindings: Sequence[BoundRules] = ()) -> None:
        self._rule_labels = RuleLabels(bindings)
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.events_received = Counter(
            "lineage_quality_events_received",
            "Events accepted (stored in the spool or written through, answered 201)",
            registry=r,
        )
        self.events_forwarded = Counter(
            "lineage_quality_events_forwarded", "Events the sink took", registry=r
        )
        self.events_written_through = Counter(
            "lineage_quality_events_written_through",
            "Events forwarded before their 201, without the spool (also counted as forwarded)",
            registry=r,
        )
        self.events_relayed = Counter(
            "lineage_quality_events_relayed",
            "Events from Kafka in that Kafka out acknowledged without the spool (also counted as "
            "forwarded)",
            registry=r,
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
        # Kafka in (kafka/consumer.py): its events are also counted in events_received
        self.kafka_messages = Counter(
            "lineage_quality_kafka_messages",
            "Kafka messages consumed, by outcome: taken (an event kept) or dead_lettered (not an "
            "event: kept as a bounded record, a bad message)",
            ["outcome"],
            registry=r,
        )
        self.kafka_paused = Gauge(
            "lineage_quality_kafka_paused",
            "1 while Kafka consumption is paused because the spool is at its bound",
            registry=r,
        )
        self.dead_letters = Counter(
            "lineage_quality_dead_letters", "Events moved to the dead letters", registry=r
        )
        self.kafka_bad_messages_expired = Counter(
            "lineage_quality_kafka_bad_messages_expired",
            "Records of Kafka messages that were not events expired, the oldest first, past "
            "--kafka-bad-messages-max",
            registry=r,
        )
        self.dead_letters_expired = Counter(
            "lineage_quality_dead_letters_expired",
            "Dead-lettered events expired, the oldest first, past --dead-letter-max-events or "
            "--dead-letter-max-bytes",
            registry=r,
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
        self.upstream_marks = Counter(
            "lineage_quality_upstream_marks",
            "upstreamQuality assertions attached to outputs derived from unhealthy data, by "
            "scope (a column, or the whole dataset)",
            ["scope"],
            registry=r,
        )
        self.lineage_failures = Counter(
            "lineage_quality_lineage_failures",
            "Events whose lineage and health could not be read or kept (the store failed)",
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
        self.events_in_flight = Gauge(
            "lineage_quality_events_in_flight",
            "Events handed to the sink without waiting (Kafka out), not acknowledged yet: still "
            "in the spool, or relayed from Kafka in with their offsets not committed",
            registry=r,
        )
        self.alerts_pending = Gauge(
            "lineage_quality_alerts_pending", "Alerts waiting for delivery", registry=r
        )
        self.alerts_expired = Counter(
            "lineage_quality_alerts_expired",
            "Undelivered alerts expired, the oldest first, past --alert-max-pending",
            registry=r,
        )
        self.rule_value = Gauge(
            "lineage_quality_rule_value",
            "Last measured value of a contract's rule, in the rule's unit (NaN: none measured)",
            RULE_LABELS,
            registry=r,
        )
        self.rule_status = Gauge(
            "lineage_quality_rule_status",
            "Last result of a contract's rule: 1 for its status, 0 for the others",
            (*RULE_LABELS, "status"),
            registry=r,
        )
        self.rule_evaluated = Gauge(
            "lineage_quality_rule_evaluated_timestamp_seconds",
            "When a contract's rule last got a verdict (Unix time)",
            RULE_LABELS,
            registry=r,
        )
        self.evaluation_lag = Histogram(
            "lineage_quality_evaluation_lag_seconds",
            "Seconds from a COMPLETE event's eventTime to its verdicts",
            buckets=LAG_BUCKETS,
            registry=r,
        )

    def watch_spool(self, usage: Callable[[], tuple[int, int]]) -> None:
        """Read the spool's (events, bytes) at each scrape."""
        self.spool_events.set_function(lambda: float(usage()[0]))
        self.spool_bytes.set_function(lambda: float(usage()[1]))

    def watch_in_flight(self, out: Callable[[], int]) -> None:
        """Read the events out (outbound.py) at each scrape."""
        self.events_in_flight.set_function(lambda: float(out()))

    def watch_alerts(self, pending: Callable[[], int]) -> None:
        self.alerts_pending.set_function(lambda: float(pending()))

    def watch(self, alerts: AlertSender | None, lineage: LineageKeeper | None) -> None:
        """Count what the alert sender and the lineage keeper report."""
        if alerts is not None:
            self.watch_alerts(alerts.outbox.pending)
            alerts.on_sent = lambda label: self.alerts_sent.labels(sink=label).inc()
            alerts.on_failed = lambda label: self.alerts_failed.labels(sink=label).inc()
            alerts.outbox.on_expired = self.alerts_expired.inc
        if lineage is not None:
            lineage.on_failed = self.lineage_failures.inc

    def count_results(
        self,
        results: Mapping[Any, Sequence[RuleResult]],
        event: Mapping[str, Any] | None = None,
        provisional: Collection[Any] = (),
    ) -> None:
        """Count the results forwarded with `event`, and record each rule's last verdict. The
        `provisional` datasets' results (timeouts whose real results follow) are counted but
        are no rule's last verdict."""
        now = time.time()
        judged = False
        for ref, rule_results in results.items():
            for r in rule_results:
                self.assertions.labels(
                    result=r.status.value,
                    severity=facet_severity(r) or "none",
                    action=r.rule.effective_action.value,
                ).inc()
                if ref not in provisional:
                    self._last_verdict(r, now)
                    judged = True
        if judged and event is not None:
            lag = lag_seconds(event, now)
            if lag is not None:
                self.evaluation_lag.observe(lag)

    def _last_verdict(self, result: RuleResult, now: float) -> None:
        labels = self._rule_labels(result.rule)
        if labels is None:
            return  # no contract the producer loaded holds it: no series of its own
        contract, dataset, rule = labels
        self.rule_value.labels(contract, dataset, rule).set(_gauge_value(result))
        for status in STATUSES:
            current = 1.0 if status == result.status.value else 0.0
            self.rule_status.labels(contract, dataset, rule, status).set(current)
        self.rule_evaluated.labels(contract, dataset, rule).set(now)

    def exposition(self) -> tuple[bytes, str]:
        """The text format body and its Content-Type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST

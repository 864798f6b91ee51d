"""`build_outputs`: the result sinks and the alert sender of a `Settings`, made from
`settings.outputs.specs` by `type` (registry.py). `serve` and the in-driver `attach` both call it
and hand what it made to `Producer(result_sinks=..., alerts=...)`, which makes its listeners of
results with `result_listeners`.

Result-sink types each give one sink (in the order of `settings.outputs.specs`); alert types each
give one webhook, and all of them share one `AlertSender` over the producer's one durable outbox
(`alert_outbox.outbox_path(settings.spool.path)`, bounded by `settings.outputs.alert_max_pending`).
A wrong output fails here, at start-up, before anything is received; what was built before it
is closed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import attrs

from lineage_quality.producer.alert_outbox import AlertOutbox, outbox_path
from lineage_quality.producer.alert_sender import AlertSender, Webhook
from lineage_quality.producer.listeners import (
    AlertsListener,
    Listener,
    MetricsListener,
    ResultSinksListener,
    RunVerdictsListener,
    VerdictStore,
)
from lineage_quality.producer.metrics import Metrics
from lineage_quality.producer.outputs.registry import output_type
from lineage_quality.producer.result_sinks import ResultSink, close_sinks
from lineage_quality.producer.settings import OutputSpec, Settings

if TYPE_CHECKING:
    from lineage_quality.contracts import BoundRules
    from lineage_quality.lineage.keeper import LineageKeeper
    from lineage_quality.producer.shared_runs import SharedRuns


@attrs.frozen
class Outputs:
    """What `Producer` takes: `result_sinks=`, `alerts=`."""

    result_sinks: tuple[ResultSink, ...] = ()
    alerts: AlertSender | None = None


NO_OUTPUTS = Outputs()


def build_outputs(settings: Settings, bindings: Sequence[BoundRules] = ()) -> Outputs:
    """Every output of `settings.outputs.specs`; ConfigError (naming the output) when one is
    wrong."""
    sinks: list[ResultSink] = []
    webhooks: list[Webhook] = []
    try:
        for spec in settings.outputs.specs:
            kind = output_type(spec.type)
            kind.check(spec.options)
            built = kind.build(spec.options, bindings)
            if isinstance(built, Webhook):
                webhooks.append(built)
            else:
                sinks.append(built)
    except BaseException:
        close_sinks(sinks)
        raise
    alerts = None
    if webhooks:
        outbox = AlertOutbox(
            outbox_path(settings.spool.path), max_pending=settings.outputs.alert_max_pending
        )
        alerts = AlertSender(outbox, webhooks)
    return Outputs(tuple(sinks), alerts)


def result_listeners(
    *,
    metrics: Metrics,
    verdicts: VerdictStore,
    shared: SharedRuns | None,
    result_sinks: Sequence[ResultSink],
    alerts: AlertSender | None,
    lineage: LineageKeeper | None,
    settings: Settings,
) -> list[Listener]:
    """The listeners of each event's results (producer/listeners.py), in the order they are
    told: the counters, the run's verdicts, the result sinks (`build_outputs`' DataHub and the
    like), and last the alerts (what they raise sends the event round again)."""
    found: list[Listener] = [MetricsListener(metrics), RunVerdictsListener(verdicts, shared)]
    if result_sinks:
        found.append(ResultSinksListener(result_sinks))
    if alerts is not None:
        found.append(AlertsListener(alerts, lineage, settings))
    return found


def secrets_of(specs: Iterable[OutputSpec]) -> list[str]:
    """The option values of `specs` that must never reach a log line (e.g. Slack URLs)."""
    out = []
    for spec in specs:
        for name in output_type(spec.type).secrets:
            value = spec.options.get(name)
            if value:
                out.append(str(value))
    return out

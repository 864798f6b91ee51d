"""The alerts of one event, along lineage (issue 39; docs/lineage.md, "Alerts").

- Each failure alert (alerts.py) says how many downstream datasets had read the failing write
  when the alert was made (`downstream`: `read`, `at`): from the lineage store, at that moment;
  the count does not follow later reads (`impact` shows them).
- A new alert (`lineage-quality.critical`) fires once per critical dataset and upstream failure
  when a BLOCK failure, or a mark made under `--upstream block`, reaches a dataset whose contract
  marks it critical (ODCS `tags: [critical]`). Its key (the failure's run, the dataset and the
  failure) is kept once by the outbox, so later writes carrying the same mark do not alert again.

A store that cannot be read costs the count (left out, logged), never the alert.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from lineage_quality.lineage.impact import walk
from lineage_quality.lineage.keeper import LineageKeeper
from lineage_quality.lineage.model import Mark, Read, Write
from lineage_quality.links import marquez_dataset_url
from lineage_quality.producer.alerts import CRITICAL, Alert, alerts_for
from lineage_quality.producer.settings import DEFAULTS, Settings
from lineage_quality.results import RuleResult
from lineage_quality.values.event import Event
from lineage_quality.values.refs import DatasetRef

log = logging.getLogger(__name__)

# walking a failing write for the count: a bound on the work done at alert time
COUNT_MAX_WRITES = 200

Results = Mapping[DatasetRef, Sequence[RuleResult]]
Marks = Mapping[DatasetRef, Sequence[Mark]]


def event_alerts(
    event: Mapping[str, Any],
    results: Results,
    marks: Marks,
    lineage: LineageKeeper | None,
    settings: Settings = DEFAULTS,
) -> list[Alert]:
    """The failure alerts of `event` (with their downstream count when lineage is kept) and its
    critical alerts; `settings`: the minimum severity and Marquez's URL."""
    url = settings.outputs.marquez_web_url
    alerts = alerts_for(
        event, results, settings.outputs.alert_min_rank, url, settings.outputs.view_url
    )
    if lineage is None:
        return alerts
    counted = [_counted(event, a, lineage) for a in alerts]
    return counted + critical_alerts(event, results, marks, lineage, url)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _write_of(event: Mapping[str, Any], alert: Alert, lineage: LineageKeeper) -> Write | None:
    """The write the alert is about: the run's own write of an output; for an input, the write
    of it the run read."""
    role = alert.payload["dataset"]["role"]
    if role == "outputs":
        return lineage.store.write_of(alert.dataset, alert.run_id)
    ev = Event.of(event)
    found = next((d for d in ev.datasets if d.ref.role == role and d.key == alert.dataset), None)
    if found is None:
        return None
    return lineage.store.written(Read(alert.dataset, found.version), ev.time_ms)


def _counted(event: Mapping[str, Any], alert: Alert, lineage: LineageKeeper) -> Alert:
    try:
        write = _write_of(event, alert, lineage)
        reached: set[str] = set()
        if write is not None:
            impact = walk(write, lineage.store, max_writes=COUNT_MAX_WRITES)
            reached = set(impact.readers) | set(impact.datasets)
        if alert.payload["dataset"]["role"] == "inputs":  # this run read it too
            reached |= {d.key for d in Event.of(event).outputs}
    except Exception as exc:  # the count is extra: never lose the alert for it
        log.warning("could not count the readers of %s downstream: %s", alert.dataset, exc)
        return alert
    payload = {**alert.payload, "downstream": {"read": len(reached), "at": _now()}}
    return Alert(alert.run_id, alert.dataset, payload)


def _blocking(
    mark: Mark, event: Mapping[str, Any], results: Results, lineage: LineageKeeper
) -> bool:
    """A mark under `--upstream block`, or one whose origin is a failed BLOCK rule (on the write
    upstream, or in this run's own verdicts on an input)."""
    if mark.blocking:
        return True
    o = mark.origin
    try:
        write = lineage.store.write_of(o.dataset, o.run)
    except Exception:
        write = None
    if write is not None:
        return any(f.rule == o.rule and f.blocking for f in write.failures)
    return any(
        ref.key == o.dataset
        and (r.rule.name or r.rule.id) == o.rule
        and r.rule.effective_action.value == "BLOCK"
        for ref, found in results.items()
        for r in found
    )


def critical_alerts(
    event: Mapping[str, Any],
    results: Results,
    marks: Marks,
    lineage: LineageKeeper,
    marquez_web_url: str | None = None,
) -> list[Alert]:
    """One alert per (critical output, upstream BLOCK failure) of the event's marks."""
    ev = Event.of(event)
    run = ev.run_id
    if run is None or not marks:
        return []
    out: list[Alert] = []
    for ref, found in marks.items():
        if not found or not lineage.critical(event, ref):
            continue
        by_origin: dict[tuple[str, str, str], list[Mark]] = {}
        for m in found:
            if _blocking(m, event, results, lineage):
                by_origin.setdefault((m.origin.dataset, m.origin.rule, m.origin.run), []).append(m)
        for (dataset, rule, origin_run), chosen in by_origin.items():
            o = chosen[0].origin
            upstream = {"dataset": dataset, "rule": rule, "run": origin_run}
            if o.column is not None:
                upstream["column"] = o.column
            if o.version is not None:
                upstream["version"] = o.version
            payload: dict[str, Any] = {
                "type": CRITICAL,
                "runId": run,
                "eventTime": ev.event_time,
                "job": {"namespace": ev.job_namespace, "name": ev.job_name},
                "dataset": {"namespace": ref.namespace, "name": ref.name, "role": ref.role},
                "upstream": upstream,
                "wholeDataset": any(m.column is None for m in chosen),
                "columns": sorted({m.column for m in chosen if m.column is not None}),
            }
            if marquez_web_url:
                payload["url"] = marquez_dataset_url(marquez_web_url, ref.namespace, ref.name)
            # once per critical dataset and upstream failure: the outbox keeps this key once
            key = f"critical {ref.key} <- {dataset} {rule}"
            out.append(Alert(origin_run, key, payload))
    return out

"""Which results alert, and the messages the webhooks get. Pure.

A failed (or ERROR: could not run) rule alerts when its action alerts (ALERT, BLOCK, QUARANTINE,
CORRECT) and its severity is at or above the configured minimum. One alert covers one run and one
dataset (`Alert.key`): the outbox keeps a key once, so retries, restarts and the duplicate
COMPLETE events the listener sends for one write never alert twice.

The generic webhook gets the payload as JSON, names as received (JSON escapes what it must); Slack
gets them escaped for mrkdwn and within its block limits (`slack_message`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from lineage_quality.inert import slack, truncate
from lineage_quality.links import marquez_dataset_url, view_dataset_url
from lineage_quality.results import RuleResult, Status
from lineage_quality.values.event import Event
from lineage_quality.values.refs import DatasetRef

GENERIC = "generic"
SLACK = "slack"
CRITICAL = "lineage-quality.critical"  # a BLOCK failure upstream reached a critical dataset

# Severity words of the three formats -> a rank, as the facets name them (`high` is `error`);
# unknown or no severity ranks as `warn` (a failure nobody classified still reaches someone).
_RANKS = {
    "info": 0,
    "low": 0,
    "warn": 1,
    "warning": 1,
    "medium": 1,
    "high": 2,
    "error": 2,
    "critical": 2,
    "blocker": 2,
}
SEVERITIES = ("info", "warn", "error")
DEFAULT_MIN_SEVERITY = "info"


def severity_rank(severity: str | None) -> int:
    return _RANKS.get((severity or "").strip().lower(), 1)


def parse_min_severity(value: str) -> int:
    rank = _RANKS.get(value.strip().lower())
    if rank is None:
        raise ValueError(f"severity must be one of {', '.join(SEVERITIES)}, not {value!r}")
    return rank


@attrs.frozen
class Alert:
    run_id: str
    dataset: str  # namespace:name
    payload: dict[str, Any]  # the generic JSON message

    @property
    def key(self) -> tuple[str, str]:
        return self.run_id, self.dataset


def alerting(results: Sequence[RuleResult], min_rank: int) -> list[RuleResult]:
    return [
        r
        for r in results
        if r.status in (Status.FAILED, Status.ERROR)
        and r.rule.effective_action.alerts
        and severity_rank(r.rule.severity) >= min_rank
    ]


def alerts_for(
    event: Mapping[str, Any],
    results: Mapping[DatasetRef, Sequence[RuleResult]],
    min_rank: int = 0,
    marquez_web_url: str | None = None,
    view_url: str | None = None,
) -> list[Alert]:
    """One alert per dataset of the event with alerting failures (a link to the dataset in
    Marquez and in the quality view when their addresses are given)."""
    ev = Event.of(event)
    run_id = ev.run_id
    if not run_id:
        return []
    out: list[Alert] = []
    for ref, rule_results in results.items():
        failed = alerting(rule_results, min_rank)
        if not failed:
            continue
        payload: dict[str, Any] = {
            "type": "lineage-quality.alert",
            "runId": run_id,
            "eventTime": ev.event_time,
            "job": {"namespace": ev.job_namespace, "name": ev.job_name},
            "dataset": {"namespace": ref.namespace, "name": ref.name, "role": ref.role},
            "failed": [
                {
                    "rule": r.rule.name or r.rule.id,
                    "status": r.status.value,
                    "severity": r.rule.severity,
                    "action": r.rule.effective_action.value,
                    "expected": r.expected,
                    "actual": r.actual_text(),
                    "message": r.message,
                    # how many failing rows were sampled, never their values: those stay in
                    # check's output, the history store and the quality view (payload["view"])
                    **({"samples": len(r.samples.rows)} if r.samples and r.samples.rows else {}),
                }
                for r in failed
            ],
        }
        if marquez_web_url:
            payload["url"] = marquez_dataset_url(marquez_web_url, ref.namespace, ref.name)
        if view_url:
            payload["view"] = view_dataset_url(view_url, ref.key)
        out.append(Alert(run_id, ref.key, payload))
    return out


# Slack's Block Kit limits: a section's or a context element's text is at most 3,000 characters
# (a longer one makes Slack refuse the whole message with a 400). The notification `text` is held
# to the same.
SLACK_TEXT_LIMIT = 3000


def _mrkdwn(text: str) -> dict[str, str]:
    return {"type": "mrkdwn", "text": truncate(text, SLACK_TEXT_LIMIT)}


def slack_message(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A Slack incoming-webhook message (`text` for notifications, `blocks` for the body).

    Every value from an event or a contract is escaped for mrkdwn (`inert.slack`): a name holding
    `<!channel>` or `<https://evil.example|Reset your password>` shows as typed, it pings no one
    and links nowhere. Texts over Slack's limit are cut with a visible marker."""
    dataset = payload["dataset"]
    job = payload["job"]
    failed = payload["failed"]
    title = (
        f"{len(failed)} data-quality rule(s) failed on "
        f"{slack(str(dataset['namespace']))}:{slack(str(dataset['name']))}"
    )
    lines = []
    for f in failed:
        actual = f["actual"] if f["actual"] is not None else (f["message"] or "")
        lines.append(
            f"• *{slack(str(f['rule']))}* {slack(str(f['status']))} [{slack(str(f['action']))}] "
            f"expected `{slack(str(f['expected']))}`, actual `{slack(str(actual))}`"
            + (f", {int(f['samples'])} failing row(s) sampled" if f.get("samples") else "")
        )
    context = [
        _mrkdwn(
            f"job {slack(str(job['namespace']))}/{slack(str(job['name']))}, "
            f"run {slack(str(payload['runId']))}"
        )
    ]
    downstream = payload.get("downstream")
    if downstream:  # counted when the alert was made (lineage_alerts.py)
        context.append(
            _mrkdwn(
                f"read by {int(downstream['read'])} downstream dataset(s) so far "
                f"(at {slack(str(downstream['at']))})"
            )
        )
    return _blocks(title, "\n".join(lines), context, payload)


def _blocks(
    title: str, body: str, context: list[dict[str, str]], payload: Mapping[str, Any]
) -> dict[str, Any]:
    if payload.get("url"):
        # ours: the Marquez URL given to `serve`, with the names URI-encoded in it
        context.append(_mrkdwn(f"<{slack(str(payload['url']))}|open in Marquez>"))
    if payload.get("view"):  # ours too: the view's address given to `serve`, the name encoded
        context.append(_mrkdwn(f"<{slack(str(payload['view']))}|open in the quality view>"))
    return {
        "text": truncate(title, SLACK_TEXT_LIMIT),
        "blocks": [
            {"type": "section", "text": _mrkdwn(f"*{title}*")},
            {"type": "section", "text": _mrkdwn(body)},
            {"type": "context", "elements": context},
        ],
    }


def critical_slack(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A critical alert (lineage_alerts.py) for Slack, every name escaped as above."""
    dataset, job, up = payload["dataset"], payload["job"], payload["upstream"]
    title = (
        f"a BLOCK failure upstream reached critical dataset "
        f"{slack(str(dataset['namespace']))}:{slack(str(dataset['name']))}"
    )
    column = f".{slack(str(up['column']))}" if up.get("column") else ""
    where = (
        "the whole dataset"
        if payload.get("wholeDataset")
        else "columns " + ", ".join(slack(str(c)) for c in payload.get("columns", []))
    )
    body = (
        f"• upstream *{slack(str(up['dataset']))}{column}*: rule *{slack(str(up['rule']))}* "
        f"failed in run {slack(str(up['run']))}\n• marked here: {where}"
    )
    context = [
        _mrkdwn(
            f"job {slack(str(job['namespace']))}/{slack(str(job['name']))}, "
            f"run {slack(str(payload['runId']))}"
        )
    ]
    return _blocks(title, body, context, payload)


def message_for(kind: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    if kind != SLACK:
        return dict(payload)
    return critical_slack(payload) if payload.get("type") == CRITICAL else slack_message(payload)

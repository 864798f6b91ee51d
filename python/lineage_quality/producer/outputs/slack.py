"""`slack`: each alert as a Slack message, to an incoming-webhook URL (docs/operations.md).

    {"type": "slack", "url": "https://hooks.slack.com/services/..."}

The URL is a secret: never in a log line (serve redacts it; logs and metrics show the host).
Durability: outboxed (the producer's alert outbox, beside the spool).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lineage_quality.producer.alerts import SLACK
from lineage_quality.producer.outputs.output_type import Built, Durability, OutputType, webhook

if TYPE_CHECKING:
    from lineage_quality.contracts import BoundRules


def build(options: Mapping[str, Any], bindings: Sequence[BoundRules]) -> Built:
    return webhook(options["url"], SLACK)


OUTPUT = OutputType(
    "slack",
    Durability.OUTBOXED,
    build,
    options=("url",),
    required=("url",),
    secrets=("url",),
    summary="alerts as Slack messages to an incoming webhook",
)

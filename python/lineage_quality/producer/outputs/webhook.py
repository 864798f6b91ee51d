"""`webhook`: each alert POSTed as JSON to a URL (docs/operations.md, "Alerts").

    {"type": "webhook", "url": "https://ops.example.com/hooks/quality"}

Durability: outboxed (the producer's alert outbox, beside the spool).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lineage_quality.producer.alerts import GENERIC
from lineage_quality.producer.outputs.output_type import Built, Durability, OutputType, webhook

if TYPE_CHECKING:
    from lineage_quality.contracts import BoundRules


def build(options: Mapping[str, Any], bindings: Sequence[BoundRules]) -> Built:
    return webhook(options["url"], GENERIC)


OUTPUT = OutputType(
    "webhook",
    Durability.OUTBOXED,
    build,
    options=("url",),
    required=("url",),
    secrets=("url",),
    summary="alerts POSTed as JSON",
)

"""Forwarding through openlineage-python transports, configured the usual OpenLineage way:
`openlineage.yml` (or the file named by OPENLINEAGE_CONFIG) or `OPENLINEAGE__TRANSPORT__...`
environment variables; file, console, http (Marquez), kafka, composite..."""

from __future__ import annotations

import logging
import os
from typing import Any

from openlineage.client import OpenLineageClient
from openlineage.client.transport import Transport

from lineage_quality.errors import ConfigError

log = logging.getLogger(__name__)


def configured_transport() -> Transport:
    """The transport of the usual OpenLineage configuration; refuse none at all, rather than
    openlineage-python's fallback of printing events to the console (events would go nowhere)."""
    client = OpenLineageClient()
    configured = bool((client.config.transport or {}).get("type")) or bool(
        os.environ.get("OPENLINEAGE_URL")
    )
    if not configured and os.environ.get("OPENLINEAGE_DISABLED", "").lower() != "true":
        raise ConfigError(
            "no OpenLineage transport configured to forward events to: pass "
            "--openlineage-config FILE, put an openlineage.yml in the working directory, or set "
            "OPENLINEAGE__TRANSPORT__TYPE (and ..._URL); use type: console to print them"
        )
    return client.transport


class Forwarder:
    def __init__(self, transport: Transport | None = None) -> None:
        self.transport = transport if transport is not None else configured_transport()
        log.info("forwarding lineage events through %s", type(self.transport).__name__)

    def send(self, event: dict[str, Any]) -> None:
        """Hand one event to the sink; raises if the sink did not take it."""
        # A raw dict keeps every field the listener sent (the transports serialize dicts as they
        # are, dropping only JSON nulls).
        self.transport.emit(event)  # type: ignore[arg-type]

    def close(self) -> None:
        self.transport.close()

"""Forwarding through openlineage-python transports, configured the usual OpenLineage way:
`openlineage.yml` (or the file named by OPENLINEAGE_CONFIG) or `OPENLINEAGE__TRANSPORT__...`
environment variables; file, console, http (Marquez), kafka, composite..."""

from __future__ import annotations

import logging
from typing import Any

from openlineage.client import OpenLineageClient
from openlineage.client.transport import Transport

log = logging.getLogger(__name__)


class Forwarder:
    def __init__(self, transport: Transport | None = None) -> None:
        self.transport = transport if transport is not None else OpenLineageClient().transport
        log.info("forwarding lineage events through %s", type(self.transport).__name__)

    def send(self, event: dict[str, Any]) -> None:
        """Hand one event to the sink; raises if the sink did not take it."""
        # A raw dict keeps every field the listener sent (the transports serialize dicts as they
        # are, dropping only JSON nulls).
        self.transport.emit(event)  # type: ignore[arg-type]

    def close(self) -> None:
        self.transport.close()

"""MCPs to a DataHub GMS with the SDK's `DatahubRestEmitter`.

On first use the emitter reads the server's `/config` (`test_connection`), which is how the SDK
chooses its endpoint: OpenAPI (`POST /openapi/v3/entity/{type}`) on servers that support it,
Rest.li (`POST /aspects?action=ingestProposalBatch`) otherwise; `openapi` forces one. A failed
connection is retried with the next batch. Writes are SYNC_PRIMARY: stored when the call returns.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.emitter.rest_emitter import DatahubRestEmitter, EmitMode


class McpRestWriter:
    def __init__(
        self,
        gms_url: str,
        token: str | None = None,
        openapi: bool | None = None,
        timeout_seconds: float = 30.0,
    ) -> None:
        self.gms_url = gms_url
        self._emitter = DatahubRestEmitter(
            gms_server=gms_url,
            token=token,
            openapi_ingestion=openapi,
            timeout_sec=timeout_seconds,
        )
        self._connected = False
        self._lock = threading.Lock()

    def write(self, mcps: Sequence[MetadataChangeProposalWrapper]) -> None:
        if not mcps:
            return
        with self._lock:
            if not self._connected:
                self._emitter.test_connection()
                self._connected = True
            self._emitter.emit_mcps(list(mcps), emit_mode=EmitMode.SYNC_PRIMARY)

    def close(self) -> None:
        self._emitter.close()

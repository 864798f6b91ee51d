"""MCPs to a DataHub GMS with the SDK's `DatahubRestEmitter` (in SDK client mode).

On first use the emitter reads the server's `/config` (`test_connection`), which is how the SDK
chooses its endpoint: OpenAPI (`POST /openapi/v3/entity/{type}?async=false`) on servers from
1.0.1, Rest.li (`POST /aspects?action=ingestProposalBatch`) before; `openapi` forces one.
Writes are SYNC_PRIMARY: stored when the call returns. The SDK retries 429/5xx and connection
errors (`retry_max_times`, exponential backoff); when a batch still fails for want of a server
(no connection, 5xx, 429, 401), the writer refuses batches for `cooldown_seconds` instead of
waiting on an absent server for each of them. A batch the server rejects (other 4xx) is just
that batch's failure.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import requests
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.emitter.rest_emitter import DatahubRestEmitter, EmitMode
from datahub.ingestion.graph.config import ClientMode


class DataHubUnavailableError(Exception):
    """The GMS failed recently; batches are refused until the cool-down ends."""


def _server_unavailable(exc: BaseException) -> bool:
    """False when the server answered and refused this batch (a 4xx other than 401/429)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, requests.HTTPError) and seen.response is not None:
            status = seen.response.status_code
            return not (400 <= status < 500) or status in (401, 429)
        seen = seen.__cause__ or seen.__context__
    return True


class McpRestWriter:
    def __init__(
        self,
        gms_url: str,
        token: str | None = None,
        openapi: bool | None = None,
        timeout_seconds: float = 30.0,
        retry_max_times: int = 3,
        cooldown_seconds: float = 30.0,
    ) -> None:
        self.gms_url = gms_url
        self.cooldown_seconds = cooldown_seconds
        self._emitter = DatahubRestEmitter(
            gms_server=gms_url,
            token=token,
            openapi_ingestion=openapi,
            timeout_sec=timeout_seconds,
            retry_max_times=retry_max_times,
            client_mode=ClientMode.SDK,
            datahub_component="lineage-quality",
        )
        self._connected = False
        self._retry_at = 0.0
        self._lock = threading.Lock()

    def write(self, mcps: Sequence[MetadataChangeProposalWrapper]) -> None:
        if not mcps:
            return
        with self._lock:
            wait = self._retry_at - time.monotonic()
            if wait > 0:
                raise DataHubUnavailableError(
                    f"{self.gms_url} failed recently; next attempt in {wait:.0f}s"
                )
            try:
                if not self._connected:
                    self._emitter.test_connection()
                    self._connected = True
                self._emitter.emit_mcps(list(mcps), emit_mode=EmitMode.SYNC_PRIMARY)
            except Exception as exc:
                if _server_unavailable(exc):
                    self._retry_at = time.monotonic() + self.cooldown_seconds
                raise

    def close(self) -> None:
        self._emitter.close()

"""Forwarding through openlineage-python transports, configured the usual OpenLineage way:
`openlineage.yml` (or the file named by OPENLINEAGE_CONFIG) or `OPENLINEAGE__TRANSPORT__...`
environment variables; file, console, http (Marquez), kafka, composite..."""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from openlineage.client import OpenLineageClient
from openlineage.client.serde import Serde
from openlineage.client.transport import Transport

from lineage_quality.errors import ConfigError
from lineage_quality.producer.http_fast import FastHttp

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


class RawEvent(dict[str, Any]):
    """An event for openlineage-python's transports that serializes to exactly `text`.

    Every transport (http, file, console, kafka, composite...) writes an event with
    `Serde.to_json`, which drops nulls and `{}` list items and re-formats numbers; a received
    event must reach the sink as received, with only our facets inserted. The dict holds the
    parsed event for transports that read it (a Kafka message key, a file name)."""

    def __init__(self, text: str) -> None:
        super().__init__(json.loads(text))
        self.text = text


def _install_raw_serialization() -> None:
    """One targeted hook on openlineage-python's Serde: a RawEvent is written as its text;
    every other object is serialized by openlineage-python as before."""
    if getattr(Serde, "_lineage_quality_raw", False):
        return
    original = Serde.to_json

    def to_json(cls: type[Serde], /, obj: Any, **kwargs: Any) -> str:
        if isinstance(obj, RawEvent):
            return obj.text
        return original(obj, **kwargs)

    setattr(Serde, "to_json", classmethod(to_json))  # noqa: B010
    setattr(Serde, "_lineage_quality_raw", True)  # noqa: B010


class Forwarder:
    def __init__(self, transport: Transport | None = None) -> None:
        self.transport = transport if transport is not None else configured_transport()
        _install_raw_serialization()
        # a plain http:// sink: kept-alive connections instead of requests (see http_fast)
        self.fast = FastHttp.for_transport(self.transport)
        log.info(
            "forwarding lineage events through %s%s",
            type(self.transport).__name__,
            " (kept-alive connections)" if self.fast is not None else "",
        )

    def send(self, body: str) -> None:
        """Hand one event (its JSON text) to the sink, byte for byte; raises if the sink did
        not take it."""
        if self.fast is not None and self.fast.send(body):
            return
        self.transport.emit(RawEvent(body))  # type: ignore[arg-type]

    def close(self) -> None:
        if self.fast is not None:
            self.fast.close()
        self.transport.close()

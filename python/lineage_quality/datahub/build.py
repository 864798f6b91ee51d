"""`build_sink`: the result sink for a DataHubConfig, built at start-up.

Its own module so that imports inside this package go one way: config.py is read by everything,
and only this module (and sink.py) reads sink.py, which needs the SDK.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lineage_quality.datahub.config import DataHubConfig, require_sdk
from lineage_quality.errors import ConfigError

if TYPE_CHECKING:
    from lineage_quality.contracts import BoundRules
    from lineage_quality.datahub.sink import DataHubSink


def build_sink(config: DataHubConfig, bindings: Sequence[BoundRules] = ()) -> DataHubSink:
    """The result sink for `config`; ConfigError if the SDK is missing or a value is wrong."""
    if not config.enabled:
        raise ConfigError("a DataHub sink needs a GMS URL or an MCP file")
    require_sdk()  # before the import below, which needs it
    from lineage_quality.datahub.sink import DataHubSink

    return DataHubSink.from_config(config, bindings)

"""Rule results -> DataHub Assertion entities (`pip install 'lineage-quality[datahub]'`).

    config.py          DataHubConfig / NamingConfig, SDK check, build_sink     (no SDK import)
    naming.py          OpenLineage dataset -> DataHub platform and name        (pure, no SDK)
    mapping.py         Rule -> scope, aggregation, operator, parameters        (pure, no SDK)
    urns.py            dataset, schema field and stable assertion URNs
    assertion_info.py  assertionInfo + dataPlatformInstance aspects
    run_events.py      assertionRunEvent of one evaluation
    mcps.py            one evaluated OpenLineage event -> its MCPs             (pure)
    file.py, rest.py   MCP writers: JSON MCP file, GMS via DatahubRestEmitter
    sink.py            the producer's result sink: MCPs queued, written in the background

The SDK (`acryl-datahub`) is imported only when a name that needs it is used, so this package
can be imported without the extra; `build_sink` raises ConfigError saying what to install.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lineage_quality.datahub.config import DataHubConfig, NamingConfig, build_sink, require_sdk
from lineage_quality.datahub.naming import DatasetName, dataset_name

if TYPE_CHECKING:
    from lineage_quality.datahub.mcps import event_mcps
    from lineage_quality.datahub.sink import DataHubSink

__all__ = [
    "DataHubConfig",
    "DataHubSink",
    "DatasetName",
    "NamingConfig",
    "build_sink",
    "dataset_name",
    "event_mcps",
    "require_sdk",
]


def __getattr__(name: str) -> Any:
    if name == "DataHubSink":
        from lineage_quality.datahub.sink import DataHubSink

        return DataHubSink
    if name == "event_mcps":
        from lineage_quality.datahub.mcps import event_mcps

        return event_mcps
    raise AttributeError(name)

"""Rule results -> DataHub Assertion entities (`pip install 'lineage-quality[datahub]'`).

    config.py          DataHubConfig / NamingConfig, SDK check                  (no SDK import)
    build.py           build_sink: the sink of a config, SDK checked first      (no SDK import)
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
Imports go one way: config and mapping read nothing of this package; naming reads config; urns
naming and mapping; assertion_info and run_events read those; mcps reads them all; sink reads mcps;
build reads sink (tests/unit/test_layout.py fails on any import circle).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lineage_quality.datahub.build import build_sink
from lineage_quality.datahub.config import DataHubConfig, NamingConfig, require_sdk
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

"""Rule results -> DataHub Assertion entities (`pip install 'lineage-quality[datahub]'`).

    config.py          DataHubConfig / NamingConfig / AssertionOptions, SDK check (no SDK import)
    build.py           build_sink: the sink of a config, SDK checked first      (no SDK import)
    naming.py          OpenLineage dataset -> DataHub platform and name        (pure, no SDK)
    shape.py           the values a kind declares: CUSTOM Shape, native types  (pure, no rules)
    mapping.py         Rule -> native type or CUSTOM shape, native parameters  (pure, no SDK)
    urns.py            dataset, schema field and stable assertion URNs
    native.py          a native type (shape.py) -> DataHub's assertion classes
    assertion_info.py  assertionInfo, assertionActions, dataPlatformInstance, status
    run_events.py      assertionRunEvent of one evaluation (error types by cause)
    published.py       which assertion each rule was last sent as (superseded -> removed)
    data_contract.py   one dataContract per contract object and dataset
    definitions.py     the MCPs defining a rule's assertion, and a contract's
    mcps.py            one evaluated OpenLineage event -> its MCPs             (pure)
    publish.py         contracts -> definitions and data contracts before any run
    file.py, rest.py   MCP writers: JSON MCP file, GMS via DatahubRestEmitter
    sink.py            the producer's result sink: MCPs queued, written in the background

The SDK (`acryl-datahub`) is imported only when a name that needs it is used, so this package
can be imported without the extra; `build_sink` raises ConfigError saying what to install.
Imports go one way: config, shape and mapping read nothing of this package but shape; naming
reads config; urns naming and mapping; native shape; assertion_info and run_events read those;
definitions them and published, data_contract; mcps reads them all; sink and publish read mcps;
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

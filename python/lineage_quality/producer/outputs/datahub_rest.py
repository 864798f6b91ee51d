"""`datahub-rest`: assertion MCPs of each evaluation to a DataHub GMS (docs/datahub.md).

    {"type": "datahub-rest", "url": "http://gms:8080", "env": "PROD", "platform_instance": ...}

Also `instance` (the assertions' platform instance), `incidents` (the rule actions that raise
DataHub incidents: "BLOCK" by default, "none"), `marquez_web_url` (results link there), `state`
(a JSON file: superseded assertions are marked removed after a restart too).

`token` defaults to DATAHUB_GMS_TOKEN. Durability: dropped and counted (the sink's in-memory
queue; `DataHubSink.dropped`, `.failed`). Needs `pip install 'lineage-quality[datahub]'`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lineage_quality.datahub.build import build_sink
from lineage_quality.datahub.config import ASSERTION_OPTIONS, DataHubConfig
from lineage_quality.producer.outputs.output_type import Built, Durability, OutputType

if TYPE_CHECKING:
    from lineage_quality.contracts import BoundRules


def build(options: Mapping[str, Any], bindings: Sequence[BoundRules]) -> Built:
    config = DataHubConfig.from_options(
        gms_url=options["url"],
        token=options.get("token"),
        **{k: options.get(k) for k in ASSERTION_OPTIONS},
    )
    return build_sink(config, bindings)


OUTPUT = OutputType(
    "datahub-rest",
    Durability.DROPPED_AND_COUNTED,
    build,
    options=("url", "token", *ASSERTION_OPTIONS),
    required=("url",),
    secrets=("token",),
    summary="assertion MCPs to a DataHub GMS",
)

"""`datahub-file`: assertion MCPs of each evaluation appended to a JSON file of MCPs, the form
`datahub ingest` (source `file`) reads (docs/datahub.md).

    {"type": "datahub-file", "path": "assertions.json", "env": "PROD", "platform_instance": ...}

and the other options of `datahub-rest` (`instance`, `incidents`, `marquez_web_url`, `state`).

Durability: dropped and counted (the sink's in-memory queue; `DataHubSink.dropped`, `.failed`);
each batch taken is fsynced. Needs `pip install 'lineage-quality[datahub]'`.
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
        file=str(options["path"]), **{k: options.get(k) for k in ASSERTION_OPTIONS}
    )
    return build_sink(config, bindings)


OUTPUT = OutputType(
    "datahub-file",
    Durability.DROPPED_AND_COUNTED,
    build,
    options=("path", *ASSERTION_OPTIONS),
    required=("path",),
    summary="assertion MCPs appended to a JSON file of MCPs",
)

"""A new output kind, made the way docs/architecture.md says ("Add an output"): this one
module, and one line in the registry, `register(recording_output.OUTPUT)` (test_outputs.py makes
it, as `outputs/registry.py` does for the built-in kinds). Nothing else is touched."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lineage_quality.producer.outputs.output_type import Built, Durability, OutputType
from lineage_quality.results import RuleResult
from lineage_quality.values.refs import DatasetRef


class RecordingSink:
    """Keeps what it is given, in memory (dropped with the process: its durability rule)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.emitted: list[tuple[Mapping[str, Any], dict[DatasetRef, list[RuleResult]]]] = []
        self.closed = False

    def emit(
        self, event: Mapping[str, Any], results: Mapping[DatasetRef, Sequence[RuleResult]]
    ) -> None:
        self.emitted.append((event, {ref: list(r) for ref, r in results.items()}))

    def close(self) -> None:
        self.closed = True


def build(options: Mapping[str, Any], bindings: Sequence[Any]) -> Built:
    return RecordingSink(str(options["name"]))


OUTPUT = OutputType(
    "recording",
    Durability.DROPPED_AND_COUNTED,
    build,
    options=("name",),
    required=("name",),
    summary="results kept in memory (a test's output)",
)

"""The output types by `type`: the one place an output type is registered (one line each,
below), the way openlineage-python registers its transports. An output type is one module of
this package (docs/architecture.md: "Recipe: add an output")."""

from __future__ import annotations

from lineage_quality.errors import ConfigError
from lineage_quality.producer.outputs import datahub_file, datahub_rest, slack, webhook
from lineage_quality.producer.outputs.output_type import OutputType

TYPES: dict[str, OutputType] = {}


def register(output: OutputType) -> None:
    """Make `output` buildable by its type; a type registered twice is an error."""
    known = TYPES.get(output.type)
    if known is not None and known is not output:
        raise ValueError(f"output type {output.type!r} is registered already")
    TYPES[output.type] = output


def unregister(type_: str) -> None:
    TYPES.pop(type_, None)


def output_type(type_: str) -> OutputType:
    """The output type `type_`; ConfigError naming it, and the known types, when there is
    none."""
    found = TYPES.get(type_)
    if found is None:
        raise ConfigError(f"unknown output type {type_!r} (known: {', '.join(sorted(TYPES))})")
    return found


register(datahub_rest.OUTPUT)
register(datahub_file.OUTPUT)
register(webhook.OUTPUT)
register(slack.OUTPUT)

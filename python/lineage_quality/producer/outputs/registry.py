"""The output kinds by `type`: the one place a kind is registered (one line each, below), the
way openlineage-python registers its transports. A kind is one module of this package
(docs/architecture.md: "Recipe: add an output")."""

from __future__ import annotations

from lineage_quality.errors import ConfigError
from lineage_quality.producer.outputs import datahub_file, datahub_rest, slack, webhook
from lineage_quality.producer.outputs.kind import OutputKind

KINDS: dict[str, OutputKind] = {}


def register(kind: OutputKind) -> None:
    """Make `kind` buildable by its type; a type registered twice is an error."""
    known = KINDS.get(kind.type)
    if known is not None and known is not kind:
        raise ValueError(f"output type {kind.type!r} is registered already")
    KINDS[kind.type] = kind


def unregister(type_: str) -> None:
    KINDS.pop(type_, None)


def kind_of(type_: str) -> OutputKind:
    """The kind of `type_`; ConfigError naming it, and the known types, when there is none."""
    kind = KINDS.get(type_)
    if kind is None:
        raise ConfigError(f"unknown output type {type_!r} (known: {', '.join(sorted(KINDS))})")
    return kind


register(datahub_rest.KIND)
register(datahub_file.KIND)
register(webhook.KIND)
register(slack.KIND)

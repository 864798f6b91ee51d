"""Which dataset of an event a verdict is about: `DatasetRef` (its role, its position in the
event, its namespace and name), and the catalog tables a dataset names (its `symlinks` facet).
A domain value: evaluation, enrich, DataHub and alerts all speak of datasets this way. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs


@attrs.frozen
class DatasetRef:
    """A dataset of an event: `role` is `inputs` or `outputs`, `index` its position there."""

    role: str
    index: int
    namespace: str
    name: str

    @property
    def key(self) -> str:
        return f"{self.namespace}:{self.name}"


def table_identities(facets: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(namespace, name) of each catalog table identity of a dataset (`symlinks`, type TABLE)."""
    symlinks = (facets or {}).get("symlinks")
    found: list[tuple[str, str]] = []
    if isinstance(symlinks, Mapping):
        for ident in _identifiers(symlinks):
            if isinstance(ident, Mapping) and ident.get("type") == "TABLE":
                name = ident.get("name")
                if isinstance(name, str) and name:
                    found.append((str(ident.get("namespace") or ""), name))
    return found


def table_names(facets: Mapping[str, Any] | None) -> list[str]:
    """The catalog table identities of a dataset (its `symlinks` facet, type TABLE)."""
    symlinks = (facets or {}).get("symlinks")
    names: list[str] = []
    if isinstance(symlinks, Mapping):
        for ident in _identifiers(symlinks):
            if isinstance(ident, Mapping) and ident.get("type") == "TABLE":
                name = ident.get("name")
                if isinstance(name, str) and name:
                    names.append(name)
    return names


def _identifiers(symlinks: Mapping[str, Any]) -> list[Any]:
    """The facet's `identifiers`, or none when an event sent something else than a list."""
    found = symlinks.get("identifiers")
    return found if isinstance(found, list) else []

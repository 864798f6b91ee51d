"""Which dataset of an event a verdict is about: `DatasetRef` (its role, its position in the
event, its namespace and name), and the refs of an event. A domain value: evaluation, enrich,
DataHub and alerts all speak of datasets this way. Pure."""

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


def datasets_of(event: Mapping[str, Any]) -> list[DatasetRef]:
    refs: list[DatasetRef] = []
    for role in ("inputs", "outputs"):
        for i, ds in enumerate(event.get(role) or []):
            if (
                isinstance(ds, Mapping)
                and isinstance(ds.get("namespace"), str)
                and isinstance(ds.get("name"), str)
            ):
                refs.append(DatasetRef(role, i, ds["namespace"], ds["name"]))
    return refs

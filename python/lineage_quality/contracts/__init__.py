"""Contract readers: each format compiles to rules bound to OpenLineage datasets."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from lineage_quality.contracts.binding import BoundRules, DatasetPattern, rules_for
from lineage_quality.contracts.odcs import load_odcs, parse_odcs
from lineage_quality.errors import ContractError

_SUFFIXES = (".yaml", ".yml")


def require_bindings(bindings: Iterable[BoundRules]) -> None:
    """The producer can only use rules it can match to OpenLineage datasets."""
    for b in bindings:
        if not b.patterns:
            path, _, where = b.source.partition(": ")
            raise ContractError(
                path,
                "schema object is bound to no dataset: add a `servers` entry with a `path` or "
                "`location`, or customProperties `openlineage.namespace` and `openlineage.name`",
                where or None,
            )


def load_contracts(
    paths: Iterable[str | os.PathLike[str]], require_binding: bool = True
) -> list[BoundRules]:
    """Load contract files, or every `*.yaml`/`*.yml` in the given folders."""
    out: list[BoundRules] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            files = sorted(f for f in path.rglob("*") if f.suffix in _SUFFIXES)
        elif path.exists():
            files = [path]
        else:
            raise ContractError(str(path), "no such contract file or folder")
        for f in files:
            out.extend(load_odcs(f))
    if require_binding:
        require_bindings(out)
    return out


__all__ = [
    "BoundRules",
    "DatasetPattern",
    "load_contracts",
    "load_odcs",
    "parse_odcs",
    "require_bindings",
    "rules_for",
]

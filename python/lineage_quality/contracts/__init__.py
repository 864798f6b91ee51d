"""Contract readers: each format compiles to rules bound to OpenLineage datasets."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from lineage_quality.contracts.binding import BoundRules, DatasetPattern, rules_for
from lineage_quality.contracts.odcs import load_odcs, parse_odcs
from lineage_quality.contracts.schema_json import load_schema_json
from lineage_quality.contracts.shacl import ShaclOptions, load_shacl
from lineage_quality.errors import ContractError

_SUFFIXES = (".yaml", ".yml", ".json", ".ttl", ".turtle")
_UNBOUND = {
    ".json": 'add a top-level `dataset`: {"namespace": ..., "name": ...}',
    ".ttl": "give the dcat:Dataset a dcat:accessURL or dcat:downloadURL",
}
_UNBOUND_ODCS = (
    "add a `servers` entry with a `path` or `location`, or customProperties "
    "`openlineage.namespace` and `openlineage.name`, or a catalog table with "
    "`openlineage.table`"
)


def load_file(
    path: Path, shacl: ShaclOptions | None = None, column: str | None = None
) -> list[BoundRules]:
    """One contract file, by extension: .yaml/.yml ODCS, .json schema rules, .ttl SHACL.
    `column`: the property of an ODCS fragment that is a bare `quality:` list (`check
    --column`)."""
    suffix = path.suffix.lower()
    if not path.exists():
        raise ContractError(str(path), "no such contract file")
    try:
        if suffix in (".yaml", ".yml"):
            return load_odcs(path, column)
        if column is not None:
            raise ContractError(str(path), "--column applies to an ODCS `quality:` fragment")
        if suffix == ".json":
            return [load_schema_json(path)]
        if suffix in (".ttl", ".turtle"):
            return load_shacl(path, shacl or ShaclOptions())
    except ContractError:
        raise
    except (RecursionError, MemoryError, ValueError, TypeError, OverflowError) as exc:
        # A reader tripped on something its checks did not foresee: still a clear error naming
        # the file, never a traceback; the message is cut short (it may quote a huge value).
        text = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise ContractError(str(path), f"cannot read the contract: {text}") from exc
    raise ContractError(
        str(path), f"unknown contract format {suffix!r}: use .yaml (ODCS), .json or .ttl (SHACL)"
    )


def require_bindings(bindings: Iterable[BoundRules]) -> None:
    """The producer can only use rules it can match to OpenLineage datasets."""
    for b in bindings:
        if not b.patterns and not b.tables:
            path, _, where = b.source.partition(": ")
            how = _UNBOUND.get(Path(path).suffix.lower(), _UNBOUND_ODCS)
            raise ContractError(
                path, f"{b.object_name} is bound to no dataset: {how}", where or None
            )


def load_contracts(
    paths: Iterable[str | os.PathLike[str]],
    require_binding: bool = True,
    shacl: ShaclOptions | None = None,
) -> list[BoundRules]:
    """Load contract files, or every contract file (.yaml, .yml, .json, .ttl) in the given
    folders, recursively."""
    out: list[BoundRules] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            files = sorted(f for f in path.rglob("*") if f.suffix.lower() in _SUFFIXES)
        elif path.exists():
            files = [path]
        else:
            raise ContractError(str(path), "no such contract file or folder")
        for f in files:
            out.extend(load_file(f, shacl))
    if require_binding:
        require_bindings(out)
    return out


__all__ = [
    "BoundRules",
    "DatasetPattern",
    "ShaclOptions",
    "load_contracts",
    "load_file",
    "load_odcs",
    "parse_odcs",
    "require_bindings",
    "rules_for",
]

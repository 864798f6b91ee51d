"""YAML loading that remembers the line of every mapping, so errors can name it."""

from __future__ import annotations

from typing import Any

import yaml

from lineage_quality.errors import ContractError


class LineDict(dict[str, Any]):
    """A mapping read from YAML, with the 1-based line it starts on."""

    line: int = 0


class _Loader(yaml.SafeLoader):
    pass


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    out = LineDict()
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        out[key] = loader.construct_object(value_node, deep=True)
    out.line = node.start_mark.line + 1
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(text: str, path: str) -> Any:
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        problem_mark = getattr(exc, "problem_mark", None)
        context_mark = getattr(exc, "context_mark", None)
        mark = context_mark or problem_mark  # where the broken construct starts
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        if context and problem_mark is not None:
            problem = f"{context}: {problem} at line {problem_mark.line + 1}"
        raise ContractError(path, f"invalid YAML: {problem}", where) from exc


def line_of(node: Any) -> int | None:
    return node.line if isinstance(node, LineDict) and node.line else None

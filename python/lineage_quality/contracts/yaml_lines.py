"""YAML loading that remembers the line of every mapping, so errors can name it."""

from __future__ import annotations

from typing import Any

import yaml

from lineage_quality.errors import ContractError


class LineDict(dict[str, Any]):
    """A mapping read from YAML, with the 1-based line it starts on."""

    line: int = 0


# A contract is a few hundred nodes. Aliases let a small file stand for an exponential tree
# ("billion laughs"), which pydantic validation or an error message would then walk: the tree as
# it would be expanded is bounded, and so is its depth.
MAX_EXPANDED_NODES = 200_000
MAX_DEPTH = 64


class _Loader(yaml.SafeLoader):
    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        return self.construct_document(node)


def _check_expansion(root: yaml.Node) -> None:
    """Refuse documents whose expansion (aliases followed) exceeds the bounds; computed on the
    composed graph, once per distinct node, without recursion."""
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    # iterative post-order over the node graph
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    on_path: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            on_path.discard(key)
            size = 1 + sum(sizes[id(c)] for c in children)
            depth = 1 + max((depths[id(c)] for c in children), default=0)
            if size > MAX_EXPANDED_NODES:
                raise _bound(node, f"expands to over {MAX_EXPANDED_NODES} nodes (aliases)")
            if depth > MAX_DEPTH:
                raise _bound(node, f"is nested over {MAX_DEPTH} levels deep")
            sizes[key], depths[key] = size, depth
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise _bound(node, "refers to itself (a recursive alias)")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _bound(node: yaml.Node, what: str) -> yaml.YAMLError:
    return yaml.constructor.ConstructorError(None, None, f"the document {what}", node.start_mark)


def _construct_int(loader: _Loader, node: yaml.ScalarNode) -> Any:
    try:
        return yaml.SafeLoader.construct_yaml_int(loader, node)
    except ValueError as exc:  # over Python's 4,300-digit limit for int()
        raise yaml.constructor.ConstructorError(
            None, None, f"integer too large ({len(str(node.value))} digits)", node.start_mark
        ) from exc


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    out = LineDict()
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        out[key] = loader.construct_object(value_node, deep=True)
    out.line = node.start_mark.line + 1
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def load_yaml(text: str, path: str) -> Any:
    try:
        return yaml.load(text, Loader=_Loader)
    except RecursionError as exc:  # composing nests deeper than Python's stack
        raise ContractError(path, "invalid YAML: nested too deep") from exc
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

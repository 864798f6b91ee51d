"""The bit test of a value list's codes (engine/shared_columns.py `in_positions`) is built call
by call: a SQL text to parse would cost the JVM a parse per rule on a value list, each
evaluation (issue 52: 10 -> 100 rules)."""

from __future__ import annotations

from typing import Any

from lineage_quality.engine.expressions import Expr, _post_order
from lineage_quality.engine.shared_columns import in_positions


def _nodes(root: Expr) -> list[tuple[str, str, tuple[Any, ...]]]:
    done: dict[int, Any] = {}
    found = []
    for node in _post_order(root, done):
        done[id(node)] = node
        found.append((node.kind, node.name, node.args))
    return found


def test_bit_test_parses_no_sql_text() -> None:
    nodes = _nodes(in_positions("lq_shared_0", [0, 2, 62]))
    names = [name for _, name, _ in nodes]
    assert "expr" not in names, nodes
    # shiftright(<mask as a bigint>, least(code, 63)) & 1 != 0: Java masks an int's shift to 5
    # bits, so the mask must be a long; codes past 62 are clamped to the bit no list sets.
    call = next(args for _, name, args in nodes if name == "call_function")
    assert call[0] == "shiftright"
    mask = next(args for _, name, args in nodes if name == "cast")
    assert mask[1] == "bigint"
    literals = [args[0] for _, name, args in nodes if name == "lit"]
    assert (1 << 0) | (1 << 2) | (1 << 62) in literals
    assert "least" in names and "bitwiseAND" in names and "notEqual" in names


def test_codes_past_the_mask_stay_an_in_list() -> None:
    names = [name for _, name, _ in _nodes(in_positions("lq_shared_0", [1, 63]))]
    assert names[-1] == "isin" and "expr" not in names

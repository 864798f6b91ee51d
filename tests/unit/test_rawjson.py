"""rawjson (issue 27.2): an event parsed once keeps its numbers as written through enrich and back
to text; `dumps` on the C encoder writes exactly what writing the tree in Python wrote."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from lineage_quality import rawjson
from lineage_quality.rawjson import JsonNumber


def reference(value: Any) -> str:
    """What rawjson.dumps wrote before it ran on the C encoder: the tree, written in Python."""
    if isinstance(value, JsonNumber):
        return value.text
    if isinstance(value, dict):
        items = (
            json.dumps(str(k), ensure_ascii=False) + ":" + reference(v) for k, v in value.items()
        )
        return "{" + ",".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(reference(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


TRICKY = (
    '{"a":1e400,"b":[1.0,-0,2e-5,18446744073709551617,{}],"c":null,"d":[null,{},[]],'
    '"é\\u0000\\n\\"":"x\\u0001y\\u2028z😀","e":true,"f":false,"g":"\\u0000JsonNumber",'
    '"h":{"nested":{"deep":[1,2,{"n":3.14159265358979323846}]}}}'
)


def test_dumps_writes_the_tree_as_written() -> None:
    tree = rawjson.loads(TRICKY)
    assert rawjson.dumps(tree) == reference(tree)
    assert "1e400" in rawjson.dumps(tree) and "18446744073709551617" in rawjson.dumps(tree)


# On real listener events: tests/e2e/test_write_modes_e2e.py (a fresh clone has no recorded
# events here, and a skipped test is not a passed one).


def test_a_string_that_looks_like_the_placeholder_stays_a_string() -> None:
    # the placeholder holds a token drawn per call: text of the event cannot forge it
    tree = {"n": JsonNumber("7"), "s": "\u0000" + "0" * 24, "t": ["\u0000", JsonNumber("8")]}
    assert rawjson.dumps(tree) == reference(tree)


def test_plain_values_and_refusals_are_as_json_writes_them() -> None:
    assert rawjson.dumps({"x": (1, 2.5, None)}) == '{"x":[1,2.5,null]}'
    # issue 44: a non-finite float of ours is carried as its name, never refused (a refusal held
    # the event, and its worker, forever)
    nan, inf = float("nan"), float("inf")
    assert rawjson.dumps({"x": inf, "y": [nan, {"z": -inf}], "n": JsonNumber("1e400")}) == (
        '{"x":"Infinity","y":["NaN",{"z":"-Infinity"}],"n":1e400}'
    )
    with pytest.raises(TypeError):
        rawjson.dumps({"x": object()})


def test_numbers_are_copied_as_themselves() -> None:
    # enrich deep-copies the event: an immutable number need not be rebuilt
    tree = rawjson.loads('{"a":[1,2.50]}')
    copied = copy.deepcopy(tree)
    assert copied == tree and copied is not tree
    assert copied["a"][1] is tree["a"][1]
    assert copy.copy(tree["a"][0]) is tree["a"][0]


def test_a_lone_surrogate_is_written_back_as_its_escape() -> None:
    # issue 44: `"\\ud800"` in a received event decodes to a lone surrogate; written raw, the
    # text could not be encoded to UTF-8 (the spool failed on it, forever)
    tree = rawjson.loads('{"job":"a\\ud800b","k\\udfff":["\\ud83d\\ude00",1]}')
    text = rawjson.dumps(tree)
    text.encode("utf-8")  # raises on a lone surrogate
    assert text == '{"job":"a\\ud800b","k\\udfff":["\U0001f600",1]}'
    assert rawjson.loads(text) == tree


def test_integers_of_any_length_parse_and_pass_through() -> None:
    digits = "9" * 5000  # past Python's 4300-digit int conversion limit
    assert rawjson.dumps(rawjson.loads(f'{{"n":{digits}}}')) == f'{{"n":{digits}}}'
    assert rawjson.loads_plain(f'{{"n":{digits},"m":-{digits},"k":7}}') == {
        "n": float("inf"),
        "m": float("-inf"),
        "k": 7,
    }

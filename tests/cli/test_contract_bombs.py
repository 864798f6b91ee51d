"""Hostile contract files (issue 9.9): alias bombs, deep nesting and giant integers end in exit 2
naming the file (and the line where it is known), quickly and without a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from lineage_quality.cli import main

HEAD = "apiVersion: v3.1.0\nkind: DataContract\nid: t\nversion: 1.0.0\nstatus: active\n"
TTL = (
    "@prefix sh: <http://www.w3.org/ns/shacl#> .\n@prefix ex: <http://ex/> .\n"
    "@prefix dcat: <http://www.w3.org/ns/dcat#> .\n"
)


def laughs() -> str:
    levels = ["x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"]
    for i in range(1, 10):
        levels.append(f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n")
    return HEAD + "".join(levels) + "schema: *a9\n"


CASES = [
    ("laughs.yaml", laughs(), "expands to over 200000 nodes", "line 11"),
    ("recursive.yaml", HEAD + "schema: &s [*s]\n", "invalid YAML", None),
    ("deep.yaml", HEAD + "schema: " + "[" * 100 + "]" * 100 + "\n", "nested over 64", "line 6"),
    ("deeper.yaml", HEAD + "schema: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deep", None),
    (
        "bigint.yaml",
        HEAD + "schema:\n  - name: p\n    quality:\n      - metric: rowCount\n"
        "        mustBeGreaterThan: " + "9" * 5000 + "\n",
        "integer too large (5000 digits)",
        "line 10",
    ),
    ("deep.json", '{"rules": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deep", None),
    (
        "bigint.json",
        '{"rules": [\n{"field": "a", "min": ' + "9" * 5000 + "}]}",
        "integer too large",
        "line 2",
    ),
    (
        "bigint.ttl",
        TTL
        + "ex:A a dcat:Dataset ; sh:property [ sh:path ex:a ; sh:maxLength "
        + "9" * 5000
        + " ] .\n",
        "invalid Turtle",
        None,
    ),
]


@pytest.mark.parametrize(("name", "content", "message", "where"), CASES, ids=[c[0] for c in CASES])
def test_hostile_contracts_exit_2_naming_the_file(
    name: str,
    content: str,
    message: str,
    where: str | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    contract = tmp_path / name
    contract.write_text(content)
    code = main(["check", "--contract", str(contract), "--dataset", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert str(contract) in err and message in err, err
    if where:
        assert where in err, err
    assert "Traceback" not in err and len(err) < 2000

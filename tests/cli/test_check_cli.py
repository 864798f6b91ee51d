"""`lineage-quality check`: exit codes and messages, in-process and as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.cli import main

ODCS_HEAD = "apiVersion: v3.1.0\nkind: DataContract\nid: t\nversion: 1.0.0\nstatus: active\n"


@pytest.fixture(scope="module")
def data(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("check") / "people"
    spark.createDataFrame(
        [(1, "ann", 34), (2, "bob", None), (3, None, 51)], "id INT, name STRING, age INT"
    ).write.parquet(str(path))
    return path


BROKEN = [
    # (file name, content, message fragment, where fragment)
    ("bad.yaml", ODCS_HEAD + "schema:\n  - name: [x\n", "invalid YAML", "line 7"),
    (
        "metric.yaml",
        ODCS_HEAD + "schema:\n  - name: p\n    properties:\n      - name: id\n        quality:\n"
        "          - metric: nullCount\n",
        "unknown metric 'nullCount'",
        "schema[0].properties[0].quality[0] (line 11)",
    ),
    (
        "between.yaml",
        ODCS_HEAD + "schema:\n  - name: p\n    quality:\n      - metric: rowCount\n"
        "        mustBeBetween: [10, 1]\n",
        "lower bound 10 is greater than upper bound 1",
        "schema[0].quality[0]",
    ),
    (
        "type.yaml",
        ODCS_HEAD
        + "schema:\n  - name: p\n    properties:\n      - name: id\n        logicalType: integr\n",
        "unknown logicalType 'integr'",
        "schema[0].properties[0].logicalType",
    ),
    ("bad.json", '{"rules": [{"field": "id", "type": "integer",}]}', "invalid JSON", "line 1"),
    (
        "range.json",
        '{"rules": [{"field": "age", "min": 10, "max": 1}]}',
        "min 10 is greater than max 1",
        "rules[0].min",
    ),
    (
        "type.json",
        '{"rules": [{"field": "id", "type": "int64"}]}',
        "unknown type 'int64'",
        "rules[0].type",
    ),
    ("bad.ttl", "@prefix ex: <http://e/> .\nex:a ex:b \n", "invalid Turtle", "line"),
    ("rules.txt", "whatever", "unknown contract format '.txt'", None),
]


@pytest.mark.spark
@pytest.mark.parametrize(
    ("name", "content", "message", "where"), BROKEN, ids=[b[0] for b in BROKEN]
)
def test_broken_contracts_exit_2_naming_file_and_place(
    name: str,
    content: str,
    message: str,
    where: str | None,
    data: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    contract = tmp_path / name
    contract.write_text(content)
    code = main(["check", "--contract", str(contract), "--dataset", str(data)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"lineage-quality: error: {contract}" in err
    assert message in err
    if where:
        assert where in err


@pytest.mark.spark
def test_missing_contract_and_dataset_exit_2(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--contract", str(tmp_path / "nope.yaml"), "--dataset", str(data)]) == 2
    assert "no such contract file" in capsys.readouterr().err
    contract = tmp_path / "ok.json"
    contract.write_text('{"rules": [{"field": "id"}]}')
    assert main(["check", "--contract", str(contract), "--dataset", str(tmp_path / "nowhere")]) == 2
    assert "dataset path does not exist" in capsys.readouterr().err


@pytest.mark.spark
def test_several_objects_need_object_or_a_binding(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = tmp_path / "two.yaml"
    contract.write_text(
        ODCS_HEAD + "schema:\n  - name: people\n    properties:\n      - name: id\n"
        "  - name: pets\n    properties:\n      - name: paws\n"
    )
    assert main(["check", "--contract", str(contract), "--dataset", str(data)]) == 2
    assert "use --object" in capsys.readouterr().err
    assert (
        main(["check", "--contract", str(contract), "--dataset", str(data), "--object", "people"])
        == 0
    )
    assert (
        main(["check", "--contract", str(contract), "--dataset", str(data), "--object", "pets"])
        == 1
    )
    assert (
        main(["check", "--contract", str(contract), "--dataset", str(data), "--object", "cats"])
        == 2
    )


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lineage_quality.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.spark
def test_as_a_real_process(data: Path, tmp_path: Path) -> None:
    passing = tmp_path / "pass.json"
    passing.write_text(
        '{"rules": [{"field": "id", "type": "integer", "required": true, "unique": true}]}'
    )
    failing = tmp_path / "fail.json"
    failing.write_text(
        '{"rules": [{"field": "age", "type": "integer", "required": true, "max": 40}]}'
    )

    ok = _run("check", "--contract", str(passing), "--dataset", str(data), "--output", "json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["summary"] == {"total": 3, "passed": 3, "failed": 0, "skipped": 0}

    bad = _run("check", "--contract", str(failing), "--dataset", str(data))
    assert bad.returncode == 1, bad.stderr
    assert "not_null_age" in bad.stdout and "FAILED" in bad.stdout
    assert "\x1b[" not in bad.stderr  # no progress display when not on a terminal

    usage = _run("check", "--contract", str(passing))
    assert usage.returncode == 2 and "--dataset" in usage.stderr

"""`check` shows the failing rows of a failed rule (issue 54): a plain column's values in its JSON
and table; a column classified `restricted` masked, its raw value nowhere: not in the JSON, the
table, stderr, the log records, nor the history store's files. The max of a restricted number is
one row's value: shown as its hash (judged raw), its average as it is (masked_values.py)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.cli import main
from lineage_quality.history.store import open_history
from lineage_quality.samples import HASH_PREFIX, KEY_FILE_SUFFIX

pytestmark = pytest.mark.spark

SECRET = "jane.doe@private-mail"  # fails the pattern, in a restricted column
MAX_SALARY = 987653  # the max of a restricted column: one row's value
CONTRACT = """apiVersion: v3.0.2
kind: DataContract
id: people
version: 1.0.0
status: active
schema:
  - name: people
    properties:
      - name: id
        primaryKey: true
      - name: email
        classification: restricted
        quality:
          - metric: invalidValues
            arguments: {pattern: '^[a-z]+@[a-z]+[.]com$'}
            mustBe: 0
      - name: salary
        classification: restricted
        quality:
          - {metric: max, mustBeLessThan: 500000, name: salary_max}
          - {metric: avg, mustBeGreaterThan: 0, name: salary_avg}
      - name: code
        quality:
          - metric: invalidValues
            arguments: {pattern: '^[A-Z]{3}$'}
            mustBe: 0
"""


@pytest.fixture(scope="module")
def people(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("samples") / "people"
    rows = [(1, "ann@mail.com", "ABC", 51000), (2, SECRET, "AB1", MAX_SALARY),
            (3, "bob@mail.com", "abc", 60000), (4, SECRET, "XYZ", 70000)]  # fmt: skip
    schema = "id INT, email STRING, code STRING, salary INT"
    spark.createDataFrame(rows, schema).write.parquet(str(path))
    return path


def check(people: Path, tmp_path: Path, output: str, capsys: Any) -> tuple[int, str, str, Path]:
    contract = tmp_path / "people.yaml"
    contract.write_text(CONTRACT)
    store = tmp_path / "history.db"
    argv = ["check", "--contract", str(contract), "--dataset", str(people), "--output", output,
            "--history", str(store)]  # fmt: skip
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err, store


def test_a_failed_pattern_rule_shows_its_rows_and_a_restricted_value_appears_nowhere(
    people: Path, tmp_path: Path, capsys: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    code, out, err, _ = check(people, tmp_path, "json", capsys)
    assert code == 1
    results = {r["column"]: r for r in json.loads(out)["results"] if r["status"] == "FAILED"}
    plain = results["code"]["samples"]
    assert plain["columns"] == ["id", "code"]
    assert plain["rows"] == [{"id": "2", "code": "AB1"}, {"id": "3", "code": "abc"}]
    masked = results["email"]["samples"]
    assert masked["masked"] == ["email"] and len(masked["rows"]) == 2
    hashes = [r["email"] for r in masked["rows"]]
    assert hashes[0] == hashes[1] and hashes[0].startswith(HASH_PREFIX)  # equal stay equal
    _, table, table_err, _ = check(people, tmp_path, "table", capsys)
    assert "id=2, code=AB1" in table and f"email={hashes[0]}" in table
    # the key is kept beside the store: the same value hashes alike in the next check
    assert (tmp_path / ("history.db" + KEY_FILE_SUFFIX)).exists()
    again = json.loads(check(people, tmp_path, "json", capsys)[1])["results"]
    assert hashes[0] in json.dumps(again)
    kept = b"".join(p.read_bytes() for p in tmp_path.glob("history.db*"))
    assert hashes[0].encode() in kept  # the samples are in the store, masked
    for place in (out, err, table, table_err, caplog.text, kept.decode("utf-8", "replace")):
        assert SECRET not in place
    # the max of the restricted salary: FAILED on its raw value, shown as its hash
    by_name = {r["name"]: r for r in json.loads(out)["results"]}
    top = by_name["salary_max"]
    assert top["status"] == "FAILED" and top["actual"].startswith(HASH_PREFIX)
    assert by_name["salary_avg"]["actual"] == "292163"  # an average: no row's value
    salary_row = next(line for line in table.splitlines() if line.startswith("salary "))
    assert "salary_max" in salary_row and top["actual"] in salary_row  # same key, same hash
    for place in (out, err, table, table_err, caplog.text):
        assert str(MAX_SALARY) not in place and "9.87653e+05" not in place
    store = open_history(tmp_path / "history.db", read_only=True)
    try:  # kept raw for history rules' baselines, with the text readers show
        points = store.series("file:" + str(people), "people.people.salary.max.0")
    finally:
        store.close()
    assert {p.value for p in points} == {MAX_SALARY}
    assert {p.shown for p in points} == {top["actual"]}

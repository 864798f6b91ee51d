"""Every example in docs/rules.md runs through `lineage-quality check` with the verdicts and exit
code written under it (`<!-- expect: exit=N failed=a,b skipped=c args=--x,--y -->`, binding to
the code block above it)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.cli import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
BLOCK = re.compile(r"```(\w+) title=(\S+)\n(.*?)```", re.S)
EXPECT = re.compile(r"<!-- expect: (.*?) -->")


def examples() -> list[tuple[str, str, dict[str, str]]]:
    """(title, body, expectation) in document order."""
    text = DOC.read_text()
    events = sorted(
        [(m.start(), "block", m) for m in BLOCK.finditer(text)]
        + [(m.start(), "expect", m) for m in EXPECT.finditer(text)],
        key=lambda e: e[0],
    )
    out: list[tuple[str, str, dict[str, str]]] = []
    current: tuple[str, str] | None = None
    for _, kind, m in events:
        if kind == "block":
            current = (m.group(2), m.group(3))
        else:
            assert current is not None, f"expectation before any example: {m.group(0)}"
            fields = dict(part.split("=", 1) for part in m.group(1).split())
            out.append((current[0], current[1], fields))
    return out


EXAMPLES = [e for e in examples() if e[0] != "orders.csv"]
SAMPLE = next(
    body
    for title, body, _ in [
        (t, b, {}) for t, b in ((m.group(2), m.group(3)) for m in BLOCK.finditer(DOC.read_text()))
    ]
    if title == "orders.csv"
)


def test_the_page_has_examples_in_all_three_formats() -> None:
    suffixes = {Path(title).suffix for title, _, _ in EXAMPLES}
    assert suffixes == {".yaml", ".json", ".ttl"}
    assert len(EXAMPLES) >= 20


@pytest.mark.spark
@pytest.mark.parametrize(
    ("title", "body", "expect"),
    EXAMPLES,
    ids=[f"{i:02d}-{t}" for i, (t, _, _) in enumerate(EXAMPLES)],
)
def test_example(
    title: str,
    body: str,
    expect: dict[str, str],
    tmp_path: Path,
    spark: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = tmp_path / "orders.csv"
    data.write_text(SAMPLE)
    contract = tmp_path / title
    contract.write_text(body)
    extra = [a for a in expect.get("args", "").split(",") if a]
    code = main(
        [
            "check",
            "--contract",
            str(contract),
            "--dataset",
            str(data),
            "--format",
            "csv",
            "--output",
            "json",
            *extra,
        ]
    )
    out = capsys.readouterr().out
    report = json.loads(out)
    by_status: dict[str, set[str]] = {"FAILED": set(), "SKIPPED": set(), "PASSED": set()}
    for r in report["results"]:
        by_status[r["status"]].add(r["name"])
    assert code == int(expect["exit"]), out
    wanted_failed = {n for n in expect.get("failed", "").split(",") if n}
    wanted_skipped = {n for n in expect.get("skipped", "").split(",") if n}
    assert by_status["FAILED"] == wanted_failed, report
    assert by_status["SKIPPED"] == wanted_skipped, report
    errors = [r for r in report["results"] if r["code"] == "EVALUATION_ERROR"]
    assert errors == [], errors  # the documented examples all evaluate


@pytest.mark.spark
def test_the_samples_example_shows_what_the_page_says(
    tmp_path: Path, spark: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The JSON under "Failing-row samples" is what `check` prints (the hash aside)."""
    text = DOC.read_text()
    body = next(b for t, b, _ in EXAMPLES if t == "samples.odcs.yaml")
    shown = text.split("```yaml title=samples.odcs.yaml", 1)[1].split("```json\n", 1)[1]
    documented = [json.loads(part) for part in re.split(r"\n(?=\{)", shown.split("```")[0])]
    (tmp_path / "orders.csv").write_text(SAMPLE)
    (tmp_path / "samples.odcs.yaml").write_text(body)
    argv = ["check", "--contract", str(tmp_path / "samples.odcs.yaml"), "--dataset",
            str(tmp_path / "orders.csv"), "--format", "csv", "--output", "json"]  # fmt: skip
    assert main(argv) == 1
    report = {r["name"]: r for r in json.loads(capsys.readouterr().out)["results"]}
    for entry in documented:
        samples = report[entry["name"]]["samples"]
        for row in samples["rows"]:
            for column in samples.get("masked", ()):
                assert row[column].startswith("hmac:")  # a hash of this run's key
                row[column] = "hmac:…"

        assert samples == entry["samples"]


@pytest.mark.spark
def test_the_masked_statistics_example_shows_what_the_page_says(
    tmp_path: Path, spark: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The JSON under "An order statistic of a masked column" is what `check` prints (the hash
    aside), and the maximum itself (120) is in none of it."""
    text = DOC.read_text()
    body = next(b for t, b, _ in EXAMPLES if t == "masked-statistics.odcs.yaml")
    shown = text.split("```yaml title=masked-statistics.odcs.yaml", 1)[1].split("```json\n", 1)[1]
    documented = [json.loads(line) for line in shown.split("```")[0].splitlines() if line]
    (tmp_path / "orders.csv").write_text(SAMPLE)
    (tmp_path / "masked.odcs.yaml").write_text(body)
    argv = ["check", "--contract", str(tmp_path / "masked.odcs.yaml"), "--dataset",
            str(tmp_path / "orders.csv"), "--format", "csv", "--output", "json"]  # fmt: skip
    assert main(argv) == 1
    out = capsys.readouterr().out
    report = {r["name"]: r for r in json.loads(out)["results"]}
    assert len(documented) == 2
    for entry in documented:
        got = {key: report[entry["name"]][key] for key in entry}
        if entry["actual"] == "hmac:…":
            assert got["actual"].startswith("hmac:") and len(got["actual"]) == len("hmac:") + 16
            got["actual"] = "hmac:…"
        assert got == entry
    assert "120" not in out

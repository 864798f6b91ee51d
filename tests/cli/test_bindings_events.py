"""`lineage-quality bindings --events FILE` on files from anywhere (issue 44, case 9): a bad event
is one line naming the file and line, exit 2, never a traceback, and nothing is read past its
bound before it is refused (a line, or a file that is one JSON array)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from lineage_quality.cli import bindings as bindings_report
from lineage_quality.cli import main

CONTRACT = """apiVersion: v3.0.2
kind: DataContract
id: orders
version: 1.0.0
status: active
schema:
  - name: orders
    customProperties:
      - property: openlineage.namespace
        value: file
      - property: openlineage.name
        value: "/lake/orders"
    quality:
      - metric: rowCount
        mustBeGreaterThan: 0
"""
GOOD = {
    "eventType": "COMPLETE",
    "run": {"runId": "0193a8a0-0000-7000-8000-000000000000"},
    "job": {"namespace": "jobs", "name": "nightly"},
    "inputs": [{"namespace": "file", "name": "/lake/raw", "facets": {}}],
    "outputs": [{"namespace": "file", "name": "/lake/orders"}],
}
GOOD_LINE = json.dumps(GOOD)


@pytest.fixture
def contract(tmp_path: Path) -> Path:
    path = tmp_path / "orders.yaml"
    path.write_text(CONTRACT)
    return path


def _bindings(contract: Path, events: Path) -> int:
    return main(["bindings", "--contracts", str(contract), "--events", str(events)])


def _refused(
    contract: Path, events: Path, capsys: pytest.CaptureFixture[str], where: str, what: str
) -> None:
    assert _bindings(contract, events) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    assert f"{events}: {where}: " in err and what in err, err


def test_good_events_as_lines_and_as_an_array(
    contract: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = tmp_path / "events.jsonl"
    lines.write_text(f"{GOOD_LINE}\n\n{GOOD_LINE}\n")
    array = tmp_path / "events.json"
    array.write_text(f"  [\n{GOOD_LINE},\n{GOOD_LINE}\n]\n")
    for events in (lines, array):
        assert _bindings(contract, events) == 0
        out = capsys.readouterr().out
        assert "output file:/lake/orders  (2 event(s))" in out
        assert "2 dataset(s): 1 bound" in out


BAD_LINES = [
    ('{"job": {"namespace": "j", "name": "a\\ud800"}}', "lone surrogate"),
    ('{"inputs": [{"namespace": "file", "name": "/x\\udc00"}]}', "lone surrogate"),
    ("[" * 200_000, "nested too deep"),
    ('{"inputs": 5}', "`inputs` is not a list"),
    ('{"outputs": [1]}', "`outputs[0]` is not an object"),
    ('{"inputs": [{"namespace": "file", "name": 7}]}', "`inputs[0].name` is not a string"),
    ('{"inputs": [{"namespace": "file", "name": "/x", "facets": [1]}]}', "facets` is not an"),
    ('{"inputs": [{"namespace": "file", "name": "/x", "facets": {"a": 1}}]}', "is not an object"),
    ('{"inputs": [], "x": ' + "9" * 5000 + "}\n{", "not JSON"),  # the number is fine: line 3
    ("\udcff{}", "not UTF-8"),  # the byte 0xff (written with surrogateescape)
]


@pytest.mark.parametrize(("line", "what"), BAD_LINES)
def test_a_bad_event_line_is_one_message_naming_its_line(
    contract: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, what: str
) -> None:
    events = tmp_path / "events.jsonl"
    events.write_bytes(f"{GOOD_LINE}\n".encode() + line.encode("utf-8", "surrogateescape") + b"\n")
    where = "line 3" if "9" * 5000 in line else "line 2"
    _refused(contract, events, capsys, where, what)


@pytest.mark.parametrize(("line", "what"), BAD_LINES[:-2])
def test_a_bad_event_in_an_array_is_one_message_naming_its_line(
    contract: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, what: str
) -> None:
    events = tmp_path / "events.json"
    events.write_text(f"[\n{GOOD_LINE},\n\n{line}\n]\n")
    _refused(contract, events, capsys, "line 4", what)


def test_a_long_line_is_refused_before_it_is_read_whole(
    contract: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bindings_report, "MAX_EVENT_BYTES", 1024 * 1024)
    events = tmp_path / "events.jsonl"
    with events.open("w") as file:
        file.write(GOOD_LINE + "\n")
        file.write('{"x": "' + "a" * (24 * 1024 * 1024) + '"}\n')
    tracemalloc.start()
    try:
        _refused(contract, events, capsys, "line 2", "an event over 1048576 B")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024  # the 24 MB line was never held


def test_a_file_that_is_one_array_has_a_size_bound(
    contract: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bindings_report, "MAX_ARRAY_BYTES", 64 * 1024, raising=False)
    events = tmp_path / "events.json"
    events.write_text("[" + ",\n".join([GOOD_LINE] * 1000) + "]")
    assert _bindings(contract, events) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and str(events) in err and "over 65536 B" in err

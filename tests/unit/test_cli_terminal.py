"""Whatever a command prints reaches the terminal inert: names from events in `impact --output
html`, a contract's object name in `datahub publish`'s warnings, a rules file's path in `schema`'s
error. HTML-escaping is not enough there (`&`, `<` are escaped; ESC, OSC, BEL, C1, CR and U+2028
are not): no control character but line breaks and tabs may be in the bytes."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from test_lineage_impact import _event, _out
from test_lineage_propagation import NOT_NULL

from lineage_quality.cli.main import main
from lineage_quality.cli.terminal import InertStream, terminal_of
from lineage_quality.engine import verdict
from lineage_quality.lineage import observe, open_lineage

# ESC CSI (clear screen), OSC 52 (write the clipboard) ended by BEL, C1 CSI, CR, U+2028, RLO
ATTACK = "\x1b[2J\x1b]52;c;ZXZpbA==\x07\x9b31m\rover\u2028line\u202e"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _assert_inert(text: str) -> None:
    assert CONTROL.findall(text) == []


def test_the_stream_escapes_controls_and_keeps_lines() -> None:
    beneath = io.StringIO()
    stream = InertStream(beneath)  # type: ignore[arg-type]
    assert stream.write(f"a{ATTACK}\n\tb\n") == len(f"a{ATTACK}\n\tb\n")
    shown = beneath.getvalue()
    _assert_inert(shown)
    assert shown.endswith("\n\tb\n") and "\\x1b[2J" in shown and "\\u2028" in shown
    assert terminal_of(stream) is beneath  # check's progress line: ours, on purpose


def test_impact_html_printed_to_a_terminal_carries_no_control(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = open_lineage(tmp_path / "history.db")
    raw, down = f"/lake/raw{ATTACK}", f"/lake/down{ATTACK}"
    column = f"col{ATTACK}"
    failing = _event("raw-1", 0, [], {raw: None})
    rule = NOT_NULL.__class__(
        id="x", kind=NOT_NULL.kind, columns=[column], threshold=NOT_NULL.threshold,
        name=f"rule{ATTACK}",
    )  # fmt: skip
    store.record(observe(failing, {_out(failing): [verdict(rule, 3, 10)]}, store.written))
    fields = {"c": [{"namespace": "file", "name": raw, "field": column}]}
    store.record(observe(_event(f"job{ATTACK}-1", 1, [raw], {down: fields}), {}, store.written))
    store.close()
    history = ["--history", str(tmp_path / "history.db")]
    for output in ("html", "table", "json"):
        assert main(["impact", "--dataset", "file:" + raw, "--output", output, *history]) == 0
        shown = capsys.readouterr()
        _assert_inert(shown.out + shown.err)
        assert "down" in shown.out
    page = main(["impact", "--dataset", "file:" + raw, "--output", "html", *history])
    assert page == 0 and "\\x1b]52;c;ZXZpbA==\\x07" in capsys.readouterr().out  # shown, inert


def test_datahub_publish_warnings_name_the_object_inert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")
    contract = tmp_path / "c.yaml"
    contract.write_text(
        "apiVersion: v3.0.2\nkind: DataContract\nid: c\nversion: 1.0.0\nstatus: active\n"
        f"schema:\n  - name: \"orders{ATTACK.encode('unicode_escape').decode()}\"\n"
        "    customProperties:\n"
        "      - {property: openlineage.namespace, value: file}\n"
        '      - {property: openlineage.name, value: "*/x"}\n'
        "    quality:\n      - {metric: rowCount, mustBeGreaterThan: 0}\n"
    )
    out = tmp_path / "mcps.json"
    publish = ["datahub", "publish", "--contracts", str(tmp_path), "--datahub-file", str(out)]
    assert main(publish) == 0
    shown = capsys.readouterr()
    assert "skipped" in shown.err and "orders" in shown.err
    _assert_inert(shown.out + shown.err)


def test_schema_error_names_a_hostile_path_inert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / f"rules{ATTACK.replace('/', '')}.json"
    rules.write_text('{"rules": [{"field": "a", "type": "string", "required": true}, ')
    assert main(["schema", str(tmp_path / "data"), "--rules", str(rules)]) == 2
    shown = capsys.readouterr()
    assert "rules" in shown.err and "\\x1b[2J" in shown.err
    _assert_inert(shown.out + shown.err)

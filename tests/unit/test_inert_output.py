"""Event-controlled text is inert where it is shown (issue 27.5): a text log record is one line
whatever a job or dataset name holds, and what the CLI prints (dead letters, `gate`, `check`'s
table) carries no control character to the operator's terminal."""

from __future__ import annotations

import io
import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lineage_quality import logformat
from lineage_quality.cli import main
from lineage_quality.inert import inert
from lineage_quality.kinds import RuleKind
from lineage_quality.logformat import JsonFormatter, TextFormatter
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.spool import Spool
from lineage_quality.report import to_table
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold

FORGED = "nightly\n2026-11-25 12:00:00,000 ERROR lineage_quality: forged\r\x1b[2J\x9b31m\u2028x"
TITLE = "\x1b]0;owned\x07"  # sets the terminal's title


def test_inert_escapes_every_control_character_and_keeps_the_rest() -> None:
    assert inert("a\nb\r\tc\x00\x1b[2J\x7f\x9b\u2028\u202e") == (
        "a\\nb\\r\\tc\\x00\\x1b[2J\\x7f\\x9b\\u2028\\u202e"
    )
    plain = "s3://lake/orders é 数据 C:\\path <tag> & 'q'"
    assert inert(plain) == plain


def log_to(formatter: logging.Formatter) -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    logger = logging.getLogger(f"lineage_quality.test_inert.{id(formatter)}")
    logger.handlers = [handler]
    logger.propagate = False
    return logger, stream


def test_a_text_log_record_is_one_line_whatever_a_name_holds() -> None:
    logger, stream = log_to(TextFormatter())
    logger.warning("evaluating job %s", FORGED)
    try:
        raise ValueError(f"cannot read {FORGED}")
    except ValueError:
        logger.exception("dataset %s failed", FORGED)
    text = stream.getvalue()
    lines = text.splitlines()
    assert len(lines) == 2, lines
    assert "\\n2026-11-25 12:00:00,000 ERROR" in lines[0] and "\\x1b[2J" in lines[0]
    assert "Traceback (most recent call last):\\n" in lines[1]
    assert "\x1b" not in text and "\r" not in text and "\x9b" not in text


def test_json_logs_stay_json_with_the_raw_text() -> None:
    logger, stream = log_to(JsonFormatter())
    logger.warning("evaluating job %s", FORGED)
    (line,) = stream.getvalue().splitlines()
    assert json.loads(line)["message"] == f"evaluating job {FORGED}"


def test_the_default_text_format_uses_the_one_line_formatter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])
    logformat.configure(logging.INFO, "text")
    (handler,) = root.handlers
    assert isinstance(handler.formatter, TextFormatter)


def test_dead_letters_list_shows_run_ids_and_reasons_inert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "spool.db"
    spool = Spool(path, Settings.of(spool_reserve_bytes=0))
    body = json.dumps({"run": {"runId": TITLE}, "job": {"namespace": "n", "name": "j"}})
    event_id = spool.put(body, lane=f"run:{TITLE}")
    spool.dead_letter(event_id, f"refused 5 times: HTTP 400 {FORGED}")
    spool.close()
    assert main(["dead-letters", "list", "--spool", str(path)]) == 0
    out = capsys.readouterr().out
    (line,) = out.splitlines()
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "run:\\x1b]0;owned\\x07" in line and "\\n2026-11-25" in line
    assert main(["dead-letters", "show", str(event_id), "--spool", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and json.loads(shown)["event"]["run"]["runId"] == TITLE


@pytest.fixture
def runs_api() -> Iterator[str]:
    verdict = {
        "job": f"n/{TITLE}",
        "dataset": f"file:/d{FORGED}",
        "role": "outputs",
        "rule": "r",
        "status": "FAILED",
        "action": "BLOCK",
        "severity": "error",
        "expected": "== 0",
        "actual": "3",
        "message": TITLE,
    }
    body = json.dumps({"status": "evaluated", "verdicts": [verdict], "blocking": [verdict]})

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_gate_prints_verdicts_inert(runs_api: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "--run-id", f"r{TITLE}", "--url", runs_api]) == 1
    captured = capsys.readouterr()
    for text in (captured.out, captured.err):
        assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    (line,) = captured.out.splitlines()
    assert line.startswith("BLOCK file:/dnightly\\n2026-11-25")


def test_checks_table_shows_data_controlled_text_inert() -> None:
    rule = Rule(
        id="r",
        kind=RuleKind.NULL_VALUES,
        columns=("c",),
        threshold=Threshold(Operator.MUST_BE, 0),
        name=f"name{TITLE}",
    )
    result = RuleResult(rule=rule, status=Status.ERROR, message=f"bad value {FORGED}")
    table = to_table(f"file:/d{TITLE}", [result])
    assert "\x1b" not in table and "\r" not in table and "\x07" not in table
    assert len(table.splitlines()) == 5  # header, rule, the row, a blank line, the summary

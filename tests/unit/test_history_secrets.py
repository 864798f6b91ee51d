"""The PostgreSQL history's password never shows (issue 44.7): masked in every URL form in every
message (start-up errors, the CLI's error line, logs), read from a file or by libpq itself so
that `ps` shows none, and PGPASSWORD gone before the evaluator's JVM starts.

No PostgreSQL here: a URL that is not well-formed is refused before connecting, a well-formed
one fails to connect to a closed port (tests/e2e/test_history_password.py connects for real)."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lineage_quality import cli
from lineage_quality.errors import ConfigError
from lineage_quality.history.store import open_history
from lineage_quality.producer.secrets import RedactingFilter, scrub_environment

SECRET = "Sup3rS3cretPw"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


PORT = _closed_port()

# every form a password takes in a history URL, and the password each one holds
FORMS = {
    "user:PASS@": f"postgresql://lq:{SECRET}@127.0.0.1:{PORT}/history",
    "postgres:// scheme": f"postgres://lq:{SECRET}@127.0.0.1:{PORT}/history",
    "libpq ?password=": f"postgresql://lq@127.0.0.1:{PORT}/history?password={SECRET}",
    "?password= among others": (
        f"postgresql://lq@127.0.0.1:{PORT}/history?sslmode=disable&password={SECRET}&x=1"
    ),
    "a % not percent-encoded": f"postgresql://lq:{SECRET}%zz@127.0.0.1:{PORT}/history",
    "a %-encoded password": f"postgresql://lq:{SECRET}%21@127.0.0.1:{PORT}/history",
    "an @ in the password": f"postgresql://lq:{SECRET}@x@127.0.0.1:{PORT}/history",
    "an @ starting the password": f"postgresql://lq:@{SECRET}@127.0.0.1:{PORT}/history",
    "a / in the password": f"postgresql://lq:ab/{SECRET}@127.0.0.1:{PORT}/history",
    "a space in the password": f"postgresql://lq:ab {SECRET}@127.0.0.1:{PORT}/history",
    "an IPv6 host left open": f"postgresql://lq:{SECRET}@[::1/history",
    "mistyped scheme": f"postgresq://lq:{SECRET}@127.0.0.1:{PORT}/history",
    "one slash": f"postgresql:/lq:{SECRET}@127.0.0.1:{PORT}/history",
    "no slash": f"postgresql:lq:{SECRET}@127.0.0.1:{PORT}/history",
    "upper-case scheme": f"POSTGRESQL://lq:{SECRET}@127.0.0.1:{PORT}/history",
}


def _leaks(text: str) -> list[str]:
    """Pieces of the password still in `text` (the halves too: libpq quotes fragments)."""
    pieces = [SECRET, SECRET[:6], SECRET[6:], "S3cret"]
    return [p for p in pieces if p in text]


@pytest.mark.parametrize("url", FORMS.values(), ids=FORMS.keys())
def test_every_url_form_is_masked_as_text(url: str) -> None:
    """In any text, without knowing which password: a log line, an exception's message."""
    from lineage_quality.masking import masked

    line = f"cannot open the history at {url}: connection refused"
    assert _leaks(masked(line)) == [], masked(line)
    assert "127.0.0.1" in masked(f"history at {FORMS['user:PASS@']}")  # the host stays


@pytest.mark.parametrize("url", FORMS.values(), ids=FORMS.keys())
def test_opening_the_history_never_shows_the_password(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Start-up: `open_history` refuses the URL or fails to connect; its message masks every
    form, libpq's own text included (it quotes what it could not parse). A mistyped URL is
    refused, never taken for a SQLite path (which made folders such as `postgresq:`)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as refused:
        open_history(url)
    message = str(refused.value)
    assert _leaks(message) == [], message
    assert refused.value.__cause__ is None  # no chained libpq error quoting the URL
    if "password=" in url:
        assert "password=***" in message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["history", "serve"])
@pytest.mark.parametrize(
    "url", [FORMS["a % not percent-encoded"], FORMS["mistyped scheme"], FORMS["libpq ?password="]]
)
def test_the_cli_error_line_never_shows_the_password(
    command: str,
    url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import lineage_quality.producer as producer_module

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "console")
    monkeypatch.setattr(os, "environ", dict(os.environ))  # serve scrubs it: keep ours

    def started(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("serve went on with the history at a mistyped URL")

    monkeypatch.setattr(producer_module, "Producer", started)
    args = ["--history", url]
    if command == "serve":
        contracts = tmp_path / "contracts"
        contracts.mkdir()
        args += ["--contracts", str(contracts), "--spool", str(tmp_path / "spool.db")]
    assert cli.main([command, *args]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and _leaks(err) == [], err
    assert not list(tmp_path.glob("postgres*"))  # a mistyped URL is no SQLite path


def test_log_records_mask_every_url_form(caplog: pytest.LogCaptureFixture) -> None:
    """serve's secrets filter masks URL forms in any record, with no secret configured."""
    redact = RedactingFilter()
    for url in FORMS.values():
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "history at %s", (url,), None)
        assert redact.filter(record)
        assert _leaks(record.getMessage()) == [], record.getMessage()


def test_plain_text_is_left_alone() -> None:
    from lineage_quality.masking import masked

    for text in [
        "s3://lake/orders@v1 evaluated",
        "mailto:owner@example.com",
        "rows 12:30 bob@host",
        "postgresql://lq@127.0.0.1:5432/history",  # a user, no password
        "no password here",
    ]:
        assert masked(text) == text


def test_the_password_file_is_passed_to_libpq_not_the_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lineage_quality.history import postgres

    psycopg = pytest.importorskip("psycopg")
    calls: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(psycopg, "connect", lambda url, **kw: calls.append((url, kw)) or object())
    secret = tmp_path / "pw"
    secret.write_text(f"{SECRET}\r\nsecond line ignored\n")
    secret.chmod(0o600)
    url = f"postgresql://lq@127.0.0.1:{PORT}/history"
    postgres.connect(url, secret)
    assert calls == [(url, {"connect_timeout": 10, "password": SECRET})]
    postgres.connect(url)  # no file: libpq finds it (PGPASSFILE, ~/.pgpass, PGPASSWORD)
    assert calls[-1] == (url, {"connect_timeout": 10})

    with pytest.raises(ConfigError, match="give it once") as twice:
        postgres.connect(FORMS["user:PASS@"], secret)
    assert _leaks(str(twice.value)) == []
    empty = tmp_path / "empty"
    empty.write_text("\n")
    with pytest.raises(ConfigError, match="first line is empty"):
        postgres.connect(url, empty)
    with pytest.raises(ConfigError, match="cannot read it"):
        postgres.connect(url, tmp_path / "missing")


def test_the_serve_and_history_commands_take_a_password_file() -> None:
    parser = cli.build_parser()
    for argv in (["serve", "--contracts", "c"], ["history"]):
        args = parser.parse_args([*argv, "--history-password-file", "/run/secrets/pg"])
        assert args.history_password_file == "/run/secrets/pg"


def test_pgpassword_is_read_by_the_history_then_gone_before_the_evaluator_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The history store connects (libpq reads PGPASSWORD) before `serve` scrubs its
    environment; the producer, which starts the evaluator's JVM (PySpark launches it with
    os.environ), is made after: PGPASSWORD is not there any more."""
    import lineage_quality.cli.history as history_cli
    import lineage_quality.producer as producer_module

    monkeypatch.setattr(os, "environ", {**os.environ, "PGPASSWORD": SECRET})
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "console")
    seen: dict[str, str | None] = {}

    def history_store(args: Any) -> None:
        seen["history"] = os.environ.get("PGPASSWORD")

    class Stop(Exception):
        pass

    def producer(*args: Any, **kwargs: Any) -> None:
        seen["evaluator"] = os.environ.get("PGPASSWORD")
        raise Stop

    monkeypatch.setattr(history_cli, "history_store", history_store)
    import lineage_quality.cli.serve as serve_cli

    monkeypatch.setattr(serve_cli, "history_store", history_store)
    monkeypatch.setattr(producer_module, "Producer", producer)
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    with pytest.raises(Stop):
        cli.main(["serve", "--contracts", str(contracts), "--spool", str(tmp_path / "s.db")])
    assert seen == {"history": SECRET, "evaluator": None}


def test_scrubbing_removes_pgpassword() -> None:
    environ = {"PGPASSWORD": SECRET, "PGHOST": "db", "HOME": "/root"}
    assert scrub_environment(environ) == ["PGPASSWORD"]
    assert environ == {"PGHOST": "db", "HOME": "/root"}


def test_scrubbing_removes_a_url_with_a_password_under_our_prefixes() -> None:
    environ = {
        "OPENLINEAGE_URL": f"https://lq:{SECRET}@marquez.example",
        "DATAHUB_GMS_URL": "https://datahub.example:8080",  # no password: kept
        "OTHER_URL": f"https://lq:{SECRET}@elsewhere",  # not ours: the JVM may need it
    }
    assert scrub_environment(environ) == ["OPENLINEAGE_URL"]
    assert set(environ) == {"DATAHUB_GMS_URL", "OTHER_URL"}


def test_the_engines_switches_are_no_secrets() -> None:
    """`LINEAGE_QUALITY_KEY_BYTES=0` (a switch the engine reads when it evaluates) holds KEY in
    its name, not a key: scrubbing it turned the switch off in serve's evaluations."""
    environ = {
        "LINEAGE_QUALITY_KEY_BYTES": "0", "LINEAGE_QUALITY_KEY_COLUMNS": "0",
        "LINEAGE_QUALITY_API_KEY": SECRET, "OPENLINEAGE__TRANSPORT__AUTH": '{"apiKey": "x"}',
        "OPENLINEAGE__TRANSPORT__AUTH__TYPE": "api_key", "DATAHUB_GMS_TOKEN": SECRET,
    }  # fmt: skip
    assert sorted(scrub_environment(environ)) == [
        "DATAHUB_GMS_TOKEN", "LINEAGE_QUALITY_API_KEY", "OPENLINEAGE__TRANSPORT__AUTH",
    ]  # fmt: skip


def test_scrubbing_also_overwrites_the_initial_environment_proc_shows(tmp_path: Path) -> None:
    """/proc/PID/environ shows the environment a process started with, whatever unsetenv did
    since; every process of the same user can read it (issue 49.5)."""
    script = (
        "import json, os, subprocess\n"
        "from pathlib import Path\n"
        "from lineage_quality.producer.secrets import scrub_environment\n"
        "removed = scrub_environment(os.environ)\n"
        "child = subprocess.run(['cat', '/proc/self/environ'], capture_output=True).stdout\n"
        "own = Path('/proc/self/environ').read_bytes()\n"
        "print(json.dumps([removed, own.hex(), child.hex()]))\n"
    )
    secrets = {"PGPASSWORD": SECRET, "LINEAGE_QUALITY_API_KEY": "api-key-0123456789"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, **secrets, "LQ_MARKER": "visible"},
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    removed, own_hex, child_hex = json.loads(done.stdout)
    own, child = bytes.fromhex(own_hex), bytes.fromhex(child_hex)
    assert b"LQ_MARKER=visible" in own and b"LQ_MARKER=visible" in child  # the check can see
    assert sorted(removed) == sorted(secrets)
    for name, value in secrets.items():
        for seen in (own, child):
            assert name.encode() not in seen and value.encode() not in seen

"""The PostgreSQL history's password from a file or from libpq's own means (issue 44.7), against
a real PostgreSQL (the Marquez fixture's cluster, no Spark): the documented usage puts no
password on a command line, so `ps` shows none, and a refused password is never printed."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from marquez_server import PostgresHandle, start_postgres

from lineage_quality import cli
from lineage_quality.errors import ConfigError
from lineage_quality.history.store import Measured, open_history

REPO_ROOT = Path(__file__).resolve().parents[2]
USER, PASSWORD, DATABASE = "lq_history", "Hist0ry-Pw-4711", "lq_history"
WRONG = "Wr0ngPassw0rdX"


@pytest.fixture(scope="module")
def pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresHandle]:
    with start_postgres(tmp_path_factory.mktemp("history-pg")) as handle:
        handle.psql(f"CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'", superuser=True)
        handle.psql(f"CREATE DATABASE {DATABASE} OWNER {USER}", superuser=True)
        yield handle


def _url(pg: PostgresHandle) -> str:
    return f"postgresql://{USER}@{pg.host}:{pg.port}/{DATABASE}"  # no password


def _secret_file(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


@pytest.fixture(autouse=True)
def _no_libpq_password(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "no-pgpass"))


def test_the_password_file_opens_the_history_for_serve_and_the_viewer(
    pg: PostgresHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = _secret_file(tmp_path / "history-password", PASSWORD + "\n")
    store = open_history(_url(pg), password_file=secret)
    try:
        store.append([Measured("file:/lake/orders", "orders.rows", "r1", "rowCount", 5.0,
                               "PASSED", int(time.time() * 1000))])  # fmt: skip
    finally:
        store.close()
    args = ["history", "--history", _url(pg), "--history-password-file", str(secret)]
    assert cli.main(args) == 0
    assert "file:/lake/orders\t1 point(s)" in capsys.readouterr().out


def test_libpq_finds_the_password_itself(
    pg: PostgresHandle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = f"{pg.host}:{pg.port}:{DATABASE}:{USER}:{PASSWORD}\n"
    monkeypatch.setenv("PGPASSFILE", str(_secret_file(tmp_path / "pgpass", line)))
    open_history(_url(pg)).close()
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    open_history(_url(pg)).close()


def test_a_refused_password_is_never_printed(pg: PostgresHandle, tmp_path: Path) -> None:
    secret = _secret_file(tmp_path / "wrong", WRONG + "\n")
    for where, password_file in [
        (_url(pg), secret),
        (f"{_url(pg)}?password={WRONG}", None),
        (f"postgresql://{USER}:{WRONG}@{pg.host}:{pg.port}/{DATABASE}", None),
    ]:
        with pytest.raises(ConfigError) as refused:
            open_history(where, password_file=password_file)
        message = str(refused.value)
        assert "password authentication failed" in message
        assert WRONG not in message and "Passw0rd" not in message, message


def test_serve_with_a_password_file_shows_no_password_in_ps(
    pg: PostgresHandle, tmp_path: Path
) -> None:
    """`serve --history URL --history-password-file FILE`: its command line (what `ps` shows)
    and its log hold no password, and it did open the shared history."""
    secret = _secret_file(tmp_path / "history-password", PASSWORD + "\n")
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    log_path = tmp_path / "serve.log"
    env = {**os.environ, "OPENLINEAGE__TRANSPORT__TYPE": "console"}
    args = [
        sys.executable, "-m", "lineage_quality.cli", "-v", "serve",
        "--contracts", str(contracts), "--port", "0", "--spool", str(tmp_path / "spool.db"),
        "--history", _url(pg), "--history-password-file", str(secret),
    ]  # fmt: skip
    with log_path.open("wb") as log:
        proc = subprocess.Popen(args, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=log)
    try:
        lines: queue.Queue[bytes] = queue.Queue()
        assert proc.stdout is not None
        stdout = proc.stdout

        def read() -> None:
            for x in stdout:
                lines.put(x)
            lines.put(b"")  # serve ended

        threading.Thread(target=read, daemon=True).start()
        line = lines.get(timeout=60)
        assert b" listening on " in line, log_path.read_text()
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        assert _url(pg) in cmdline and PASSWORD not in cmdline
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    # serve made its table in the shared history, as USER
    import psycopg

    with psycopg.connect(_url(pg), password=PASSWORD) as db:
        (owner,) = db.execute("SELECT tableowner FROM pg_tables WHERE tablename = 'lq_history'")
        assert owner == (USER,)
    assert PASSWORD not in log_path.read_text()

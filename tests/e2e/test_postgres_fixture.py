"""The PostgreSQL half of the Marquez fixture works on this machine, Marquez jar or not."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from marquez_server import start_postgres

pytestmark = pytest.mark.marquez


def test_postgres_starts_answers_as_marquez_and_stops(tmp_path: Path) -> None:
    with start_postgres(tmp_path) as pg:
        # Over TCP with the marquez role's password: exactly how Marquez will connect.
        assert pg.psql("SELECT 1") == "1"
        assert pg.psql("SELECT current_user || '@' || current_database()") == "marquez@marquez"
        # Marquez's Flyway migrations create tables in `public`; the role must be allowed to.
        pg.psql("CREATE TABLE probe (id int); DROP TABLE probe;")
        data_dir, port = pg.data_dir, pg.port

    assert not data_dir.exists()
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0, "server still listening after close"
    assert "database system is shut down" in (tmp_path / "postgres.log").read_text()

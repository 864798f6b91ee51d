"""The stores the view reads: the lineage tables and the history of a `--history` PATH|URL (a
SQLite file or the shared PostgreSQL), opened read-only, each on a connection of its own."""

from __future__ import annotations

from pathlib import Path

from lineage_quality.errors import ConfigError
from lineage_quality.history.postgres import postgres_url
from lineage_quality.history.store import open_history
from lineage_quality.lineage.store import open_lineage
from lineage_quality.view.data import Links, Stores


def open_stores(
    where: str | Path, links: Links | None = None, password_file: str | Path | None = None
) -> Stores:
    """The stores at `where`, read-only; a ConfigError naming it when there is none."""
    if not postgres_url(str(where)) and not Path(where).exists():
        raise ConfigError(f"no history store at {where} (serve's or attach's --history)")
    lineage = open_lineage(where, read_only=True, password_file=password_file)
    try:
        history = open_history(where, read_only=True, password_file=password_file)
    except ConfigError:
        history = None  # lineage without values: the pages show what there is
    return Stores(lineage, history, links or Links())

"""Connecting to a PostgreSQL history with no password where others can read it.

`--history postgresql://user:PASS@host/db` shows PASS to anyone running `ps`, and PGPASSWORD
would reach the evaluator's JVM, which runs contract SQL. So the URL may leave the password
out: libpq then finds it itself (PGPASSFILE or ~/.pgpass, or PGPASSWORD, which `serve` removes
from its environment once the history is open, before the JVM starts: cli.py), or it is read
from `--history-password-file`. Every message naming the URL masks it (masking.py), and a URL
that libpq and urllib would split differently (an `@`, `/` or space in the password, a `%` not
percent-encoded) is refused before libpq quotes a piece of it in an error.
"""

from __future__ import annotations

import logging
import re
import stat
from pathlib import Path
from typing import Any

from lineage_quality.errors import ConfigError
from lineage_quality.masking import masked, remember, url_secrets

log = logging.getLogger(__name__)

_SCHEMES = ("postgresql://", "postgres://")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_LOOKS_LIKE_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:/|postgres[a-z]*:", re.IGNORECASE)
# RFC 3986 userinfo: unreserved, percent-encoded, sub-delims and `:`
_USERINFO = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~%!$&'()*+,;=:"
)
ADVICE = (
    "leave the password out of the URL and give it with --history-password-file FILE, "
    "PGPASSFILE (~/.pgpass) or PGPASSWORD (docs/history.md)"
)


def postgres_url(where: str) -> bool:
    """True for a `postgresql://` (or `postgres://`) URL, False for a SQLite path; a ConfigError
    (masked) for what looks like a mistyped URL, rather than a SQLite file created at a path
    such as `postgresq:/user:PASS@host/db`."""
    remember(url_secrets(where))
    if where.startswith(_SCHEMES):
        return True
    if where.startswith("sqlite://") or not _LOOKS_LIKE_URL.match(where):
        return False
    raise ConfigError(
        f"history {masked(where)}: neither a SQLite path nor a postgresql:// URL "
        "(postgresql://USER@HOST:PORT/DATABASE)"
    )


def read_password_file(path: str | Path) -> str:
    """The password on the first line of `path` (its line end dropped)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        mode = Path(path).stat().st_mode
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"--history-password-file {path}: cannot read it: {reason}") from None
    password = text.split("\n", 1)[0].removesuffix("\r")
    if not password:
        raise ConfigError(f"--history-password-file {path}: its first line is empty")
    remember([password])
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning("--history-password-file %s can be read by others: chmod 600 it", path)
    return password


def connect(url: str, password_file: str | Path | None = None) -> Any:
    """A psycopg connection to the history at `url` (the password from `password_file` when
    given, else as libpq finds it); a ConfigError with the URL masked when it cannot."""
    remember(url_secrets(url))
    _check_well_formed(url)
    options: dict[str, Any] = {"connect_timeout": 10}
    if password_file is not None:
        if url_secrets(url):
            raise ConfigError(
                f"history {masked(url)}: a password in the URL and --history-password-file: "
                "give it once, in the file (the URL shows in `ps`)"
            )
        options["password"] = read_password_file(password_file)
    try:
        import psycopg
    except ImportError as exc:
        raise ConfigError(
            "a PostgreSQL history needs psycopg: pip install 'lineage-quality[postgres]'"
        ) from exc
    try:
        return psycopg.connect(url, **options)
    except psycopg.Error as exc:
        # from None: the original's text (libpq's) may quote the connection string
        reason = masked(str(exc).strip().replace("\n", " "))
        raise ConfigError(f"cannot open the history at {masked(url)}: {reason}") from None


def _check_well_formed(url: str) -> None:
    """Refuse a URL that parsers would split in different places (before libpq quotes it)."""
    rest = url.partition("://")[2]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    reason = None
    if any(c.isspace() or not c.isprintable() for c in url):
        reason = "a space or control character in it"
    elif _BAD_PERCENT.search(url):
        reason = "a % not followed by two hex digits (write %25)"
    elif rest.count("@") > 1 or (rest.count("@") == 1 and "@" not in authority):
        reason = "an @ or / in the user name or password, or an @ after the host (write %40, %2F)"
    elif "@" in authority and not set(authority.rpartition("@")[0]) <= _USERINFO:
        reason = "a character in the user name or password that must be percent-encoded"
    if reason is not None:
        raise ConfigError(f"history {masked(url)}: not a well-formed URL ({reason}); or {ADVICE}")

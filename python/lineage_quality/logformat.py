"""How log records are written: `--log-format text` (the default), one line per record, or
`--log-format json`, one JSON object per line, for log collectors. Either way a record is one
line whatever an event's names hold: text escapes control characters (`lineage_quality.inert`),
JSON escapes them as JSON does."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone

from lineage_quality.inert import inert

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# LogRecord attributes that are not `extra=` fields.
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "taskName",
}


class JsonFormatter(logging.Formatter):
    """`time` (UTC, ISO 8601), `level`, `logger`, `message`, `exc_info` when there is one, and
    any `extra=` fields (values that are not JSON become their str)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "thread": record.threadName,
        }
        # exc_text first: the secrets filter leaves a masked traceback there
        if record.exc_text:
            out["exc_info"] = record.exc_text
        elif record.exc_info:
            out["exc_info"] = self.formatException(record.exc_info)
        for key, value in record.__dict__.items():
            if key not in _STANDARD and key not in out:
                out[key] = value
        return json.dumps(out, default=str)


class TextFormatter(logging.Formatter):
    """`time LEVEL logger: message`, on one line: a job or dataset name holding a newline would
    otherwise start a forged record, and an escape sequence would reach the terminal tailing the
    log. Control characters of the whole record, traceback included, are written as escapes
    (`\\n`, `\\x1b`)."""

    def __init__(self, fmt: str = TEXT_FORMAT) -> None:
        super().__init__(fmt)

    def format(self, record: logging.LogRecord) -> str:
        return inert(super().format(record))


def configure(level: int, fmt: str) -> None:
    """Root logging to stderr as `text` (the default) or `json`."""
    if fmt == "json":
        handler = logging.StreamHandler()
        handler.setFormatter(JsonFormatter())
        logging.basicConfig(level=level, handlers=[handler])
    else:
        handler = logging.StreamHandler()
        handler.setFormatter(TextFormatter())
        logging.basicConfig(level=level, handlers=[handler])

"""`--log-format json`: one JSON object per log line, for log collectors."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone

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


def configure(level: int, fmt: str) -> None:
    """Root logging to stderr as `text` (the default) or `json`."""
    if fmt == "json":
        handler = logging.StreamHandler()
        handler.setFormatter(JsonFormatter())
        logging.basicConfig(level=level, handlers=[handler])
    else:
        logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

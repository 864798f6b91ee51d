"""Reading contract files: one place that turns I/O and encoding problems into ContractError."""

from __future__ import annotations

import os
from pathlib import Path

from lineage_quality.errors import ContractError


def read_contract(path: str | os.PathLike[str]) -> tuple[str, str]:
    """(text, source name) of a contract file."""
    file = Path(path)
    try:
        return file.read_text(encoding="utf-8"), str(file)
    except UnicodeDecodeError as exc:
        raise ContractError(str(file), f"not UTF-8 text (byte {exc.start})") from exc
    except OSError as exc:
        raise ContractError(str(file), f"cannot read: {exc.strerror or exc}") from exc

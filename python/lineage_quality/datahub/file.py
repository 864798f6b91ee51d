"""An MCP file: the JSON array of MCP objects that DataHub's file sink writes and
`datahub check metadata-file` / `datahub ingest -c` (source `file`) read.

Batches are appended in place (the closing `]` is rewritten), so a long-running producer keeps
one valid file; records already in the file are kept. Not safe for several writers at once.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from datahub.emitter.mcp import MetadataChangeProposalWrapper

from lineage_quality.errors import ConfigError


def _record(mcp: MetadataChangeProposalWrapper) -> str:
    # The shape DataHub's FileSink writes: aspects as JSON objects, not nested JSON strings.
    return json.dumps(mcp.to_obj(simplified_structure=True), indent=4)


class McpFileWriter:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._count = self._existing()

    def _existing(self) -> int:
        if not self.path.exists() or self.path.stat().st_size == 0:
            return 0
        try:
            records = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{self.path}: not a readable MCP file: {exc}") from exc
        if not isinstance(records, list):
            raise ConfigError(f"{self.path}: an MCP file is a JSON array")
        return len(records)

    def write(self, mcps: Sequence[MetadataChangeProposalWrapper]) -> None:
        if not mcps:
            return
        body = ",\n".join(_record(m) for m in mcps)
        with self._lock:
            if self._count == 0:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(self.path, "w", encoding="utf-8") as out:
                    out.write(f"[\n{body}\n]\n")
                    out.flush()
                    os.fsync(out.fileno())
            else:
                with open(self.path, "r+b") as out:
                    out.seek(self._closing_bracket(out))
                    out.truncate()
                    out.write(f",\n{body}\n]\n".encode())
                    out.flush()
                    os.fsync(out.fileno())
            self._count += len(mcps)

    def _closing_bracket(self, out: BinaryIO) -> int:
        size = out.seek(0, os.SEEK_END)
        tail_start = max(0, size - 64)
        out.seek(tail_start)
        tail = out.read()
        at = tail.rfind(b"]")
        if at < 0:
            raise OSError(f"{self.path}: the JSON array is not closed")
        return tail_start + at

    def close(self) -> None:
        pass

"""Which assertion each rule was last sent as, so that an assertion superseded by a changed rule
(same dataset, contract and rule id; a new threshold makes a new assertion URN, urns.py) is sent
`status.removed = true` and stops showing its last result beside its successor; and, when a
contract is sent whole, which of its rules are gone from it (`retire`); and which incidents
are open (incidents.py: raised by a failure, not yet resolved by a pass), with when each was
raised.

Kept in memory, and in a small JSON file when `AssertionOptions.state` names one (written
atomically on each change), so a restarted producer still knows the previous URNs. Pure but for
that file; no SDK import.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path

from lineage_quality.errors import ConfigError

MAX_ENTRIES = 100_000  # rules x datasets remembered; past it the oldest are forgotten


def _key(dataset: str, contract: str | None, rule_id: str) -> str:
    return json.dumps([dataset, contract or "", rule_id])


def _incident_key(urn: str) -> str:
    return json.dumps(["incident", urn])  # two items: never a rule's key (three)


class PublishedAssertions:
    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path else None
        self._lock = threading.Lock()
        self._urns: dict[str, str] = self._read()

    def _read(self) -> dict[str, str]:
        if self.path is None or not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{self.path}: not a readable assertion state file: {exc}") from exc
        if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in data.items()
        ):
            raise ConfigError(f"{self.path}: an assertion state file is a JSON object of URNs")
        return data

    def _write(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".assertions-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(self._urns, out)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def supersede(self, dataset: str, contract: str | None, rule_id: str, urn: str) -> str | None:
        """Record `urn` as the rule's assertion; the URN it replaces, if it had another one."""
        key = _key(dataset, contract, rule_id)
        with self._lock:
            before = self._urns.get(key)
            if before == urn:
                return None
            self._urns.pop(key, None)
            self._urns[key] = urn
            while len(self._urns) > MAX_ENTRIES:
                self._urns.pop(next(iter(self._urns)))
            self._write()
        return before

    def open_incident(self, urn: str, millis: int) -> int:
        """Record the incident `urn` as open since `millis`, unless it is open already; when it
        was raised (the earlier time, while the failures go on)."""
        key = _incident_key(urn)
        with self._lock:
            before = self._urns.get(key)
            if before is not None and before.isdigit():
                return int(before)
            self._urns[key] = str(millis)
            while len(self._urns) > MAX_ENTRIES:
                self._urns.pop(next(iter(self._urns)))
            self._write()
        return millis

    def close_incident(self, urn: str) -> int | None:
        """Forget the open incident `urn`; when it was raised (None: it was not open)."""
        with self._lock:
            before = self._urns.pop(_incident_key(urn), None)
            if before is not None:
                self._write()
        return int(before) if before is not None and before.isdigit() else None

    def retire(self, dataset: str, contract: str | None, kept: set[str]) -> list[str]:
        """Forget the rules of `contract` on `dataset` whose ids are not in `kept` (rules deleted
        from the contract); their URNs."""
        gone = []
        with self._lock:
            for key in list(self._urns):
                found = json.loads(key)
                if len(found) != 3:
                    continue  # an open incident
                ds, name, rule_id = found
                if ds == dataset and name == (contract or "") and rule_id not in kept:
                    gone.append(self._urns.pop(key))
            if gone:
                self._write()
        return gone

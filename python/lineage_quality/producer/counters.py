"""What the producer did, counted: for logs, health and tests (the Prometheus metrics are
metrics.py's)."""

from __future__ import annotations

import threading


class Counters:
    """What the producer did, for logs, health and tests: `forwarded`, `forward_failures`,
    `timeouts`, `late` (follow-ups stored), `rejected`..."""

    def __init__(self) -> None:
        self._values: dict[str, int] = {}
        self._changed = threading.Condition()

    def add(self, name: str, n: int = 1) -> None:
        with self._changed:
            self._values[name] = self._values.get(name, 0) + n
            self._changed.notify_all()

    def __getitem__(self, name: str) -> int:
        with self._changed:
            return self._values.get(name, 0)

    def snapshot(self) -> dict[str, int]:
        with self._changed:
            return dict(self._values)

    def wait_for(self, name: str, at_least: int, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self._values.get(name, 0) >= at_least, timeout)

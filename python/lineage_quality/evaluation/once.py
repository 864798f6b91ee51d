"""One evaluation per write: the results of each (run, dataset, version, rule set) evaluated,
kept for a repeated COMPLETE (saveAsTable sends two; a redelivery sends it again), and the
evaluations under way (a second COMPLETE for the same write waits for the first). Bounded:
the least recently used results go first. Results with an ERROR are not kept: tried again."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from lineage_quality.results import RuleResult, Status

log = logging.getLogger(__name__)

MEMO_SIZE = 4096  # writes whose results are kept for a repeated COMPLETE


class OncePerWrite:
    """Results by key, computed once."""

    def __init__(self, size: int = MEMO_SIZE) -> None:
        self.size = size
        self._memo: OrderedDict[Hashable, list[RuleResult]] = OrderedDict()
        self._pending: dict[Hashable, threading.Event] = {}
        self._lock = threading.Lock()

    def results(
        self, key: Hashable, compute: Callable[[], list[RuleResult]], label: str
    ) -> list[RuleResult]:
        """The results kept under `key`, else `compute()`'s (kept unless one is an ERROR); a
        computation of the same key under way is waited for."""
        while True:
            with self._lock:
                if key in self._memo:
                    self._memo.move_to_end(key)
                    log.info("%s: same write as an evaluated event; results reused", label)
                    return self._memo[key]
                waiting = self._pending.get(key)
                if waiting is None:
                    done = self._pending[key] = threading.Event()
                    break
            waiting.wait()
        try:
            results = compute()
            if not any(r.status is Status.ERROR for r in results):  # errors are tried again
                with self._lock:
                    self._memo[key] = results
                    while len(self._memo) > self.size:
                        self._memo.popitem(last=False)
            return results
        finally:
            with self._lock:
                self._pending.pop(key, None)
            done.set()

"""`serve`'s log of event datasets that no contract binds but one nearly does (the same path
under another scheme or bucket, a pattern that misses by a prefix, the same table in another
database): once per dataset, so a contract that silently matches nothing is seen, and a busy
producer's log is not flooded. The datasets seen are bounded (least recently seen forgotten)."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence

from lineage_quality.contracts.binding import BoundRules
from lineage_quality.contracts.explain import explain

log = logging.getLogger("lineage_quality.bindings")

SEEN_LIMIT = 4096  # datasets remembered; past it the least recently seen may be logged again


class NearMissLog:
    def __init__(self, bindings: Sequence[BoundRules], limit: int = SEEN_LIMIT) -> None:
        self.bindings = list(bindings)
        self.limit = limit
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._lock = threading.Lock()

    def check(self, namespace: str, name: str, tables: Sequence[str] = ()) -> str | None:
        """Log (once) and return why a contract nearly binds this unbound dataset, or None."""
        key = (namespace, name)
        with self._lock:
            if key in self._seen:
                self._seen.move_to_end(key)
                return None
            self._seen[key] = None
            while len(self._seen) > self.limit:
                self._seen.popitem(last=False)
        near = explain(self.bindings, namespace, name, tables).near
        if not near:
            return None
        why = "; ".join(f"{m.binding.contract} / {m.binding.object_name}: {m.why}" for m in near)
        log.warning(
            "dataset %s:%s is bound by no contract, but nearly: %s "
            "(`lineage-quality bindings` shows every dataset of recorded events)",
            namespace,
            name,
            why,
        )
        return why

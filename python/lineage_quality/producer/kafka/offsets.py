"""`Offsets`: what Kafka in may commit per partition, its messages kept at different times.

A message fetched is *pending* until it is kept: in the spool under a disk sync, recorded as a bad
message, or relayed to Kafka out and acknowledged there (kafka/relay.py). Messages of one partition
are kept out of their order (a relayed event waits for its acknowledgement while the spooled one
after it is synced already), so the offset committed for a partition is the lowest pending one:
every message before it is kept, and a restart reads again from there (nothing kept is lost,
nothing pending is skipped). With nothing pending it is the offset after the last message fetched.

A message is pending from the moment it is fetched (`fetched`), before anything is done with it: one
given up (the consumer stopping, a partition revoked) stays pending, so no commit passes it. Pure:
no client, no clock; the consumer's one thread calls it (kafka/consumer.py).
"""

from __future__ import annotations

Partition = tuple[str, int]


class Offsets:
    def __init__(self) -> None:
        # per partition: offsets fetched and not kept yet, and the offset after the last one
        # fetched (the committable offset once nothing is pending)
        self._pending: dict[Partition, set[int]] = {}
        self._next: dict[Partition, int] = {}

    def fetched(self, where: Partition, offset: int) -> None:
        """Message `offset` of `where` was fetched: pending until `kept`."""
        self._pending.setdefault(where, set()).add(offset)
        if offset + 1 > self._next.get(where, -1):
            self._next[where] = offset + 1

    def kept(self, where: Partition, offset: int) -> None:
        """Message `offset` of `where` is kept (spooled and synced, a bad message recorded, or
        acknowledged by Kafka out). A message never `fetched` counts as fetched now."""
        if where not in self._next or offset + 1 > self._next[where]:
            self._next[where] = offset + 1
        pending = self._pending.get(where)
        if pending is not None:
            pending.discard(offset)

    def committable(self, where: Partition) -> int | None:
        """The offset to commit for `where` (Kafka's: the next message to read): the lowest
        pending one, else the one after the last fetched; None when nothing was fetched."""
        pending = self._pending.get(where)
        if pending:
            return min(pending)
        return self._next.get(where)

    def all_committable(self) -> dict[Partition, int]:
        """`committable` of every partition something was fetched from."""
        found = {where: self.committable(where) for where in self._next}
        return {where: offset for where, offset in found.items() if offset is not None}

    def pending(self, where: Partition) -> int:
        """How many messages of `where` are fetched and not kept."""
        return len(self._pending.get(where, ()))

    def forget(self, gone: set[Partition]) -> None:
        """Partitions revoked or lost: another consumer reads on from their last commit."""
        for where in gone:
            self._pending.pop(where, None)
            self._next.pop(where, None)

"""The durable queue of received events (SQLite, WAL, synchronous=FULL): `Spool`.

    spool.py         Spool: the one object the producer talks to, composing the parts below
    store.py         the database: schema and migration, connections, write/transaction, read
    reserve.py       the disk-full reserve beside the database
    commit.py        group commit: puts and deletes share transactions; riding deletes, flusher
    index.py         what is held, in memory: lanes' ids, counts against the bound, bodies kept
    lanes.py         the lane scheduling policy: who is woken, how long a worker keeps a lane
    run_book.py      the runs API's bookkeeping (runs, verdicts, failed runs), bounded
    dead_letters.py  events a sink keeps refusing, out of their lane
    bad_messages.py  bounded records of Kafka messages that were not events

Locks, in the one order they may be taken (a lock is never taken while holding one listed after
it):

1. `Store.db_lock` (an RLock): the writer connection and everything written through it (the run
   book, dead letters, the recent runs memo, the synchronous mode).
2. `Index.lock`: what is held in memory (index.py) and who holds which lane (lanes.py: its two
   conditions, `changed` and `emptied`, share it).

Leaves, never held while another lock is taken: `GroupCommit._queue_lock` (the queue of puts and
deletes; a leader takes `db_lock` only after letting go of it), `Store.reader_lock` (the workers'
connection), and each waiting put's or delete's own lock (`commit._waiter`).
"""

from __future__ import annotations

from lineage_quality.producer.spool.bad_messages import BadMessage
from lineage_quality.producer.spool.dead_letters import DeadLetter
from lineage_quality.producer.spool.spool import Spool
from lineage_quality.producer.spool.store import EVENT, LATE, SpooledEvent, SpoolFullError

__all__ = ["EVENT", "LATE", "BadMessage", "DeadLetter", "Spool", "SpoolFullError", "SpooledEvent"]

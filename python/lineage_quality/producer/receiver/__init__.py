"""The HTTP endpoint, compatible with the OpenLineage HTTP transport: `Receiver`.

    server.py      Receiver (runs it in the background) and the server: a thread per connection,
                   a cap on connections, a reaper for request deadlines
    connection.py  one connection: keep-alive request loop, routing, answers in one write each
    request.py     the request head reader (stricter than http.server, and cheaper)
    body.py        a POST's body: framing, bounded gzip inflate, structure bounds, decode
    routes.py      the one route table: every endpoint, who may call it, its handler

Accepts JSON bodies, gzip-compressed when the transport compresses, an optional Bearer API key
(the transport's `api_key` auth). An event is durable in the spool before the 201 goes back.
Refusals: 400 malformed JSON / gzip / chunking or not an OpenLineage event (`events.check_event`),
401 wrong or missing key, 404 wrong path, 411 no length, 413 over `max_body` (also once inflated)
or past the structure bounds, 415 not JSON / unknown Content-Encoding, 503 when the spool is full
or cannot store (the sender knows it was not taken), or when `max_connections` are open.
"""

from __future__ import annotations

from lineage_quality.producer.receiver.body import RejectedError, decode, decode_event
from lineage_quality.producer.receiver.routes import LINEAGE_PATH, RUNS_PATH
from lineage_quality.producer.receiver.server import Receiver

__all__ = ["LINEAGE_PATH", "RUNS_PATH", "Receiver", "RejectedError", "decode", "decode_event"]

"""Write-through: an event that needs nothing but forwarding goes to the sink before its 201, with
no disk write, while the sink answers fast.

The spool's promise is that a 201 means the event is kept: on disk (a sync covers it) or, here,
taken by the sink (it answered 2xx). An event whose only job is to be forwarded (no rule binds it,
it is no FAIL to remember) spends most of its time in the spool waiting for a disk sync, then a
worker sends it. Sent by the receiver's own thread instead, it reaches the sink sooner and costs
no sync, no spool row, no worker handoff; the client waits for the sink rather than for the disk,
so this is done only while the sink answers faster than `Settings.write_through_below` on
average (`SinkLatency`, fed by every send, the workers' too).

Anything else — the sink slow, away, refusing, redirecting; the run's lane busy in the spool or
with a worker — and the event is put in the spool as before, so retries, back-off and dead
letters stay in one place (forward.py: Delivery). A send that timed out may have reached the sink:
the event is then spooled and sent again (at least once, as after a crash). A run's events keep
their order: the lane is held while its event is written through (spool/lanes.py).

Only the plain `http://` sink (http_fast.py) is written through: other transports are not made to
be called from many threads at once.
"""

from __future__ import annotations

import logging
import threading
import time

from lineage_quality.producer.http_fast import FastHttp

log = logging.getLogger(__name__)

_WEIGHT = 0.2  # of the newest send in the average: about the last five sends count


class SinkLatency:
    """How long the sink takes to answer, on average over the last few sends (an exponentially
    weighted mean); a failed send counts as `failed_as` seconds."""

    def __init__(self, failed_as: float) -> None:
        self.failed_as = failed_as
        self.mean: float | None = None  # nothing sent yet
        self._lock = threading.Lock()  # a failure must not be overwritten by a concurrent send

    def took(self, seconds: float) -> None:
        with self._lock:
            mean = self.mean
            self.mean = seconds if mean is None else mean + _WEIGHT * (seconds - mean)

    def failed(self) -> None:
        self.took(self.failed_as)

    def below(self, seconds: float) -> bool:
        """The sink answers faster than `seconds` on average; no before it answered at all
        (the first events go through the spool, whose workers' sends measure the sink)."""
        return self.mean is not None and self.mean < seconds


class WriteThrough:
    """Forwards an event from the receiver's thread when the sink is fast (see the module
    docstring). `below`: seconds the sink must answer within on average (None: never write
    through); `timeout`: one send's limit, from the request to the end of its answer (a
    trickled answer gives up then: the event is spooled)."""

    def __init__(
        self, fast: FastHttp | None, latency: SinkLatency, below: float | None, timeout: float
    ) -> None:
        self.fast = fast
        self.latency = latency
        self.below = below
        self.timeout = timeout
        self.sent = 0  # events written through, for logs and tests
        self._lock = threading.Lock()

    def wanted(self) -> bool:
        """Worth trying now: a plain http sink that answered fast lately."""
        return self.fast is not None and self.below is not None and self.latency.below(self.below)

    def send(self, body: str) -> int:
        """Send `body` once: the sink's answer status (it took the event when 2xx; else the
        caller spools it), 0 when no answer came."""
        fast = self.fast
        if fast is None:
            return 0
        started = time.monotonic()
        status = fast.send_once(body, self.timeout)
        if 300 <= status < 400:
            # a redirect is left to the transport (http_fast.py), every time: never again here
            log.warning("the sink answers with a redirect (%d): write-through is off", status)
            self.below = None
            return status
        if not 200 <= status < 300:
            self.latency.failed()
            return status
        self.latency.took(time.monotonic() - started)
        with self._lock:
            self.sent += 1
        return status

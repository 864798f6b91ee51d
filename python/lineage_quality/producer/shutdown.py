"""How `serve` stops: within `--drain-seconds` + `STOP_GRACE_SECONDS` of its first SIGTERM or
SIGINT, whatever died first -- the evaluator's JVM (killed with the process group), a sink that
never answers, the Kafka broker, DataHub (docs/operations.md, "Stopping").

Each step of the stop gets at most its own share of what is left (`Stopping.left`), and a step
that could block on something gone (closing a client, joining a thread, the JVM) runs on a
thread of its own that is left behind when its share is up (`within`). As a last line, a
watchdog thread ends the process at the deadline, naming the step it was in; and the process
always ends with `os._exit` once stopped, so that nothing a dead JVM or broker left in the
interpreter (a finalizer waiting on a socket, librdkafka's destroy) can hold the exit. A second
signal ends it at once.

Exit codes: 0 after a stop within the bound; 1 when the watchdog had to end it; 128 + the signal
number on a second signal. Events not forwarded by then are in the spool, forwarded after the
next start; offsets not committed are read again (at least once): nothing accepted is lost.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any, NoReturn

log = logging.getLogger(__name__)

STOP_GRACE_SECONDS = 20.0  # past --drain-seconds: every other step of the stop, together
_MARGIN = 1.0  # s kept back by each step for the next ones and the exit itself
_DRAIN_POLL = 0.2  # s: how soon the drain sees the evaluator's JVM gone
_USABLE_WAIT = 1.0  # s: while stopping, how long the JVM may take to say it still works


class Stopping:
    """The stop of one `serve`: `requested` is set by the first SIGTERM/SIGINT (`install`),
    which also arms the watchdog at `drain_seconds` + `STOP_GRACE_SECONDS`."""

    def __init__(self, drain_seconds: float, grace: float = STOP_GRACE_SECONDS) -> None:
        self.drain_seconds, self.grace = drain_seconds, grace
        self.bound = drain_seconds + grace
        self.requested = threading.Event()
        self.deadline = float("inf")
        self.step = "waiting for the stop"
        self._armed = False

    def install(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._signalled)

    def _signalled(self, signum: int, frame: Any) -> None:
        if self.requested.is_set():
            log.warning(
                "%s again while stopping (%s): exiting now; what was not forwarded is in the "
                "spool", signal.Signals(signum).name, self.step,
            )  # fmt: skip
            exit_now(128 + signum)
        self.begin()
        log.info(
            "%s: stopping, within %gs (--drain-seconds %g + %g)",
            signal.Signals(signum).name, self.bound, self.drain_seconds, self.grace,
        )  # fmt: skip

    def begin(self) -> None:
        """Start the stop now: the deadline set, the watchdog armed."""
        if self._armed:
            return
        self._armed = True
        self.deadline = time.monotonic() + self.bound
        self.requested.set()
        threading.Thread(target=self._watch, name="lq-stop-watchdog", daemon=True).start()

    def _watch(self) -> None:
        while (left := self.deadline - time.monotonic()) > 0:
            time.sleep(min(left, 0.5))
        log.error(
            "the stop did not end within %gs (still %s): exiting now; what was not forwarded "
            "is in the spool, forwarded after the next start", self.bound, self.step,
        )  # fmt: skip
        exit_now(1)

    def left(self, cap: float) -> float:
        """Seconds a step may take: `cap`, or less to leave the next steps their margin."""
        return share(self.deadline, cap)

    def now(self, step: str) -> None:
        """Name the step under way (the watchdog's log line says it)."""
        self.step = step


# Each step of a producer's stop after the drain (Producer.stop), at most, in seconds: with
# serve's deadline (within --drain-seconds + STOP_GRACE_SECONDS), and without one (the in-driver
# mode at the end of the job: DataHub's queue flushed for up to 30 s, as before).
STOP_SHARES = {
    "the workers": (5.0, 30.0),
    "the forwarder": (3.0, 15.0),
    "the result sinks": (3.0, 40.0),
    "the lineage store": (2.0, 10.0),
    "the alert sender": (2.0, 10.0),
}


def drain(
    wait_empty: Callable[[float], bool], give_up: Callable[[], bool], timeout: float
) -> None:
    """Wait up to `timeout` seconds for `wait_empty` (the spool's: every event forwarded); no
    longer once `give_up()` says nothing more can be (the evaluator's JVM gone)."""
    end = time.monotonic() + timeout
    while (left := end - time.monotonic()) > 0:
        if wait_empty(min(left, _DRAIN_POLL)):
            return
        if give_up():
            log.warning(
                "stopping with the evaluator's JVM gone: the events waiting for an evaluation "
                "stay in the spool, evaluated after the next start"
            )
            return


def close_in_turn(
    parts: Sequence[tuple[str, Callable[[float], object]]],
    deadline: float | None,
    step: Callable[[str], None],
) -> None:
    """Stop or close each part in turn, each given (and waited for) at most its share of
    `STOP_SHARES` and of what is left before `deadline` (None: the longer shares)."""
    end = math.inf if deadline is None else deadline
    for name, close in parts:
        seconds = share(end, STOP_SHARES[name][deadline is None])
        step(f"closing {name}")
        within(seconds, f"closing {name}", functools.partial(close, seconds))


def parts_of(
    workers: Sequence[threading.Thread],
    forwarder: Any,
    fanout: Any,
    lineage: Any,
    alerts: Any,
) -> list[tuple[str, Callable[[float], object]]]:
    """A producer's parts in the order they are closed (close_in_turn): its workers first, the
    lineage store after them (none is keeping an event's lineage then), the alert sender last."""
    parts: list[tuple[str, Callable[[float], object]]] = [
        ("the workers", lambda seconds: join_all(workers, seconds)),
        ("the forwarder", lambda seconds: forwarder.close()),
        ("the result sinks", lambda seconds: fanout.close()),
    ]
    if lineage is not None:
        parts.append(("the lineage store", lambda seconds: lineage.close()))
    if alerts is not None:
        parts.append(("the alert sender", lambda seconds: alerts.stop(timeout=seconds)))
    return parts


def usable(evaluator: object) -> bool:
    """Whether `evaluator` can still evaluate (`Evaluator.usable`: its JVM's process alive, its
    SparkContext answering within `_USABLE_WAIT`); a stand-in evaluator without it can."""
    check = getattr(evaluator, "usable", None)
    return not callable(check) or bool(check(_USABLE_WAIT))


def join_all(threads: Sequence[threading.Thread], seconds: float) -> None:
    """Join `threads` within `seconds` altogether."""
    end = time.monotonic() + seconds
    for thread in threads:
        thread.join(max(0.0, end - time.monotonic()))


def share(deadline: float, cap: float) -> float:
    """Seconds a step may take before `deadline` (a `time.monotonic()`): `cap`, or less to
    leave the steps after it a margin."""
    return max(0.0, min(cap, deadline - time.monotonic() - _MARGIN))


def within(seconds: float, what: str, call: Callable[[], object]) -> bool:
    """Run `call` on a thread of its own for at most `seconds`; False (logged) when it had not
    returned by then: it is left behind, a daemon thread, and ends with the process."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except Exception as exc:  # logged here: no one waits for it any more
            failed.append(exc)
            log.warning("stop: %s failed: %s", what, exc)

    thread = threading.Thread(target=run, name=f"lq-stop-{what}", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        log.warning("stop: %s did not end within %.1fs; left behind", what, seconds)
        return False
    return not failed


def exit_now(code: int) -> NoReturn:
    """End the process with `code` now, after flushing the log and the standard streams,
    without the interpreter's own teardown (see the module docstring)."""
    for flushed in [*logging.getLogger().handlers, sys.stdout, sys.stderr]:
        with suppress(Exception):  # a closed stream: nothing more to say there
            flushed.flush()
    os._exit(code)

"""One retry policy for every delivery the producer retries: forwarding events, deleting a
forwarded event, delivering alerts.

A failed try is retried after a delay that doubles from `initial` up to `maximum`, for as long as
it takes, unless the other side refused for good: a 4xx answer other than 408 (timeout) and 429
(throttled) says that the same request will be refused again, so after a few such refusals the
caller dead-letters it (events: the spool's `dead_letters`; alerts: the outbox's). No answer,
408, 429 and 5xx are outages: retried, never dead-lettered. A sink that is not HTTP says "for
good" by raising `RefusedForGood`.
"""

from __future__ import annotations

import urllib.error
from collections.abc import Iterator

import attrs

# 2**64 seconds is past any `maximum`: beyond it the exponent only risks an overflow
_MAX_DOUBLINGS = 64
RETRIED_CLIENT_ERRORS = frozenset({408, 429})


def _positive(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if value <= 0:
        raise ValueError(f"back-off {attribute.name} must be positive, not {value}")


@attrs.frozen
class Backoff:
    """Seconds to wait after consecutive failures: `initial`, doubling (`factor`) up to
    `maximum`."""

    initial: float = attrs.field(default=0.5, validator=_positive)
    maximum: float = attrs.field(default=30.0, validator=_positive)
    factor: float = attrs.field(default=2.0, validator=_positive)

    def __attrs_post_init__(self) -> None:
        if self.maximum < self.initial:
            raise ValueError(f"back-off maximum {self.maximum} is below its initial {self.initial}")

    def delay(self, failures: int) -> float:
        """The wait after `failures + 1` failures in a row (0: after the first)."""
        return min(
            self.initial * self.factor ** min(max(failures, 0), _MAX_DOUBLINGS), self.maximum
        )

    def delays(self) -> Iterator[float]:
        """The waits after each failure in a row, for a loop that retries in place."""
        failures = 0
        while True:
            yield self.delay(failures)
            failures += 1


# Forwarding to the lineage sink (and deleting forwarded events): short, the run's lane waits.
FORWARD_BACKOFF = Backoff(initial=0.5, maximum=30.0)
# Alert webhooks: nothing waits on them, a webhook that is down is not hammered.
ALERT_BACKOFF = Backoff(initial=1.0, maximum=300.0)


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of a failed request: urllib's HTTPError, or an exception carrying a
    `response` with a `status_code` (requests, openlineage-python's transports); None when no
    answer came."""
    if isinstance(exc, urllib.error.HTTPError):
        return int(exc.code)
    status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


class RefusedForGood(Exception):
    """A sink that does not speak HTTP refused a request for good (a Kafka broker refusing a
    message too large for its topic, kafka/transport.py): counted and dead-lettered like a 4xx."""


def refused_for_good(exc: BaseException) -> bool:
    """The other side answered with a client error (4xx, not 408/429), or a sink of another kind
    refused for good (`RefusedForGood`): sending the same request again will be refused again."""
    return isinstance(exc, RefusedForGood) or status_refuses_for_good(status_of(exc))


def status_refuses_for_good(status: int | None) -> bool:
    """`refused_for_good` of an answer's status (None: no answer)."""
    return status is not None and 400 <= status < 500 and status not in RETRIED_CLIENT_ERRORS

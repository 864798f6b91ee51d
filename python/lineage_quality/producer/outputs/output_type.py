"""What one output kind declares: its `type` (the key in `Settings.outputs`), the options it
takes, its one durability rule, and how it is built. A kind builds either a result sink (gets
each evaluation's results, `result_sinks.ResultSink`) or an alert webhook (`Webhook`: the
alerts go through the producer's one durable outbox)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from lineage_quality.errors import ConfigError
from lineage_quality.producer.alert_sender import Webhook
from lineage_quality.producer.result_sinks import ResultSink

if TYPE_CHECKING:
    from lineage_quality.contracts import BoundRules


class Durability(enum.Enum):
    """What happens to an output's data when its destination is slow, down or refusing. The
    lineage event itself (the OpenLineage transport) is always SPOOLED."""

    # kept in the SQLite spool until the destination took it (retried with back-off, refused
    # for good: dead-lettered); survives a crash
    SPOOLED = "spooled"
    # committed to the durable alert outbox (SQLite beside the spool) before the event leaves
    # the spool; retried until taken, dead-lettered when refused for good, the oldest expired
    # past `Settings.alert_max_pending` (counted); survives a crash
    OUTBOXED = "outboxed"
    # queued in memory and written in the background; a failure or a full queue drops the batch,
    # counted and logged, never holding up an event (the same results travel on its facets)
    DROPPED_AND_COUNTED = "dropped and counted"


Built = ResultSink | Webhook
Builder = Callable[[Mapping[str, Any], "Sequence[BoundRules]"], Built]


@attrs.frozen
class OutputType:
    """`build(options, bindings)` makes the output; ConfigError when an option is wrong. The
    factory has checked the options' names first (`options`, `required`). `secrets`: options
    whose values must never reach a log line (serve redacts them)."""

    type: str
    durability: Durability
    build: Builder
    options: tuple[str, ...]
    required: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    summary: str = ""

    def check(self, options: Mapping[str, Any]) -> None:
        """ConfigError naming an option this kind does not take, or one it needs and lacks."""
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            raise ConfigError(
                f"output {self.type!r}: unknown option(s) {', '.join(unknown)} "
                f"(it takes {', '.join(self.options)})"
            )
        missing = [name for name in self.required if not options.get(name)]
        if missing:
            raise ConfigError(f"output {self.type!r} needs option(s) {', '.join(missing)}")


def webhook(url: Any, kind: str) -> Webhook:
    """An alert webhook of `kind` (alerts.GENERIC or SLACK) at `url`, an http(s) URL."""
    hook = Webhook(str(url), kind)
    if not hook.url.startswith(("http://", "https://")):
        raise ConfigError(f"alert webhook must be an http(s) URL: {hook.label}")
    return hook

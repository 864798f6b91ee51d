"""Every setting of the producer (`serve`, and the in-driver mode), each with its default, in one
attrs object: `Settings`.

The CLI builds it from its flags (each flag's default and help are read from here: `flag`
metadata below), `attach` builds it for the in-driver producer, tests build it with what they
change. `Producer`, `Receiver` and `Spool` read their part of it; none of them has defaults of its
own. For every bound, 0 (or None) means "no bound", as on the command line.

The run bookkeeping's, the alert outbox's retention and the quarantine's size bounds are in
`lineage_quality.bounds` (`runs` here is the spool's run bookkeeping's); the dead letters', the
undelivered alerts' and the quarantine's rows per rule are settings here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from lineage_quality.bounds import QUARANTINE_MAX_ROWS, RunBookBounds
from lineage_quality.lineage.policy import Upstream, parse_upstream
from lineage_quality.producer.backoff import FORWARD_BACKOFF, Backoff
from lineage_quality.producer.enrich import MAX_ADDED_BYTES

MIB = 1024 * 1024
DEFAULT_SPOOL = Path(".lineage-quality/spool.db")
DEFAULT_RUNS = RunBookBounds()


def _none_if_zero(value: Any) -> Any:
    """0 means "no bound" / "never", as on the command line."""
    return None if value == 0 else value


def _meta(
    flag: str | None, help: str = "", group: str = "", metavar: str | None = None
) -> dict[str, Any]:
    return {"flag": flag, "help": help, "group": group, "metavar": metavar}


def _setting(
    default: Any,
    flag: str | None = None,
    help: str = "",
    group: str = "",
    metavar: str | None = None,
    zero_is_none: bool = False,
    validator: Any = None,
) -> Any:
    """An attrs field whose `flag` (when given) is a `serve` option: the CLI adds it with this
    default and help (`%(default)s` allowed), under the option group `group`."""
    return attrs.field(
        default=default,
        metadata=_meta(flag, help, group, metavar),
        converter=_none_if_zero if zero_is_none else None,
        validator=validator,
        kw_only=True,
    )


_positive = attrs.validators.gt(0)
_not_negative = attrs.validators.ge(0)


def _optional_positive(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and value <= 0:
        raise ValueError(f"{attribute.name} must be positive (or 0: none), not {value}")


@attrs.frozen
class OutputSpec:
    """One output of the producer's results besides the event itself: its `type` (a key of
    `outputs/registry.py`: `datahub-rest`, `datahub-file`, `webhook`, `slack`, ...) and that
    type's options, e.g. `OutputSpec("webhook", {"url": "https://ops.example.com/hook"})`.
    Built by `outputs/factory.py`; the options are never in a repr (a Slack URL is a secret)."""

    type: str
    options: Mapping[str, Any] = attrs.field(factory=dict, repr=False, hash=False)

    @classmethod
    def of(cls, value: OutputSpec | Mapping[str, Any]) -> OutputSpec:
        """`value` itself, or its config as a dict: `{"type": "webhook", "url": "..."}` (as
        openlineage-python's transports are configured)."""
        if isinstance(value, OutputSpec):
            return value
        if not isinstance(value, Mapping) or not isinstance(value.get("type"), str):
            raise ValueError(f"an output is a dict with a 'type', not {value!r}")
        return cls(value["type"], {k: v for k, v in value.items() if k != "type"})


def _outputs(values: Any) -> tuple[OutputSpec, ...]:
    return tuple(OutputSpec.of(v) for v in values)


@attrs.frozen
class Settings:
    """What one producer does, and how much it may hold. Frozen: `attrs.evolve` to change."""

    # -- the receiver (HTTP) ---------------------------------------------------------------------
    host: str = _setting("127.0.0.1", "--host", "bind address (default %(default)s)")
    port: int = _setting(5055, "--port", "port (default %(default)s; 0: any free port)")
    # the Bearer key senders must present (serve: LINEAGE_QUALITY_API_KEY); never in a repr
    api_key: str | None = attrs.field(default=None, repr=False, kw_only=True)
    max_body: int = _setting(
        16 * MIB, "--max-body-bytes",
        "largest event body, also once inflated (default %(default)s)",
        validator=_positive,
    )  # fmt: skip
    max_added_bytes: int = _setting(
        MAX_ADDED_BYTES, "--max-added-bytes",
        "most bytes of facets one event may gain; past it a dataset's facets are left out and "
        "an ERROR assertion says so (default %(default)s, 8 MiB)",
        metavar="BYTES", validator=_positive,
    )  # fmt: skip
    idle_timeout: float = _setting(60.0, validator=_positive)  # a kept-alive connection, idle
    header_timeout: float = _setting(10.0, validator=_positive)  # first byte to end of headers
    body_timeout: float = _setting(60.0, validator=_positive)  # the whole body (no slowloris)
    max_connections: int = _setting(256, validator=_positive)  # more: 503 at once, closed

    # -- the spool -------------------------------------------------------------------------------
    spool: Path = attrs.field(
        default=DEFAULT_SPOOL,
        metadata=_meta("--spool", "durable event spool (SQLite)", metavar="PATH"),
        converter=Path,
        kw_only=True,
    )
    spool_max_events: int | None = _setting(
        100_000, "--spool-max-events",
        "answer 503 past N queued events (default %(default)s; 0: no bound)",
        group="reliability", metavar="N", zero_is_none=True, validator=_optional_positive,
    )  # fmt: skip
    spool_max_bytes: int | None = _setting(
        1024 * MIB, "--spool-max-bytes",
        "answer 503 past this many queued bytes (default %(default)s, 1 GiB; 0: no bound)",
        group="reliability", metavar="BYTES", zero_is_none=True, validator=_optional_positive,
    )  # fmt: skip
    spool_warn_ratio: float = _setting(0.8, validator=_positive)  # warn once this full
    # given back when the disk fills up, so forwarded events can still be deleted (0: none)
    spool_reserve_bytes: int = _setting(4 * MIB, validator=_not_negative)
    spool_reserve_retry: float = _setting(1.0, validator=_not_negative)  # s between rewrites
    runs: RunBookBounds = attrs.field(default=DEFAULT_RUNS, kw_only=True)  # runs API

    # -- workers, evaluation, forwarding ---------------------------------------------------------
    workers: int = _setting(
        4, "--workers", "events handled at once, one per run (default %(default)s)",
        group="reliability", validator=_positive,
    )  # fmt: skip
    evaluation_timeout: float | None = _setting(
        300.0, "--evaluation-timeout",
        "hold a COMPLETE event at most this long for its evaluation, then forward it with the "
        "rules still running as ERROR; their results follow in an OTHER event (default "
        "%(default)s; 0: wait as long as it takes)",
        group="reliability", metavar="SECONDS", zero_is_none=True, validator=_optional_positive,
    )  # fmt: skip
    cancel_after: float | None = _setting(
        3600.0, "--evaluation-cancel-after",
        "cancel the Spark jobs of an evaluation still running after this long (default "
        "%(default)s; 0: never)",
        group="reliability", metavar="SECONDS", zero_is_none=True, validator=_optional_positive,
    )  # fmt: skip
    kill_after_cancel: float = _setting(
        30.0, "--evaluation-kill-after",
        "kill (and replace) the evaluator's own JVM when cancelled work is still running this "
        "long after its cancel (work that ignores interruption, e.g. a regex)",
        group="reliability", metavar="SECONDS", validator=_positive,
    )  # fmt: skip
    late_event_type: str = _setting("OTHER")  # eventType of the follow-up with late results
    warm_evaluator: bool = _setting(True)  # start the Spark session at start, not at 1st event
    retry: Backoff = attrs.field(default=FORWARD_BACKOFF, kw_only=True)  # forwarding, deleting
    dead_letter_after: int = _setting(
        5, "--dead-letter-after",
        "move an event the sink refused N times with a 4xx to the dead letters (0: never)",
        group="reliability", metavar="N", validator=_not_negative,
    )  # fmt: skip
    poison_after: int = _setting(
        5, "--poison-after",
        "move an event whose handling (not its sink) failed N times in a row to the dead "
        "letters; one that cannot be encoded or parsed goes at once (default %(default)s)",
        group="reliability", metavar="N", validator=_positive,
    )  # fmt: skip
    # an event the sink refused for good is kept aside, out of its lane; past these the oldest
    # dead letters expire (counted, logged): new events keep flowing, the disk stays bounded
    dead_letter_max_events: int | None = _setting(
        10_000, "--dead-letter-max-events",
        "keep at most N dead-lettered events; past it the oldest expire (default %(default)s; "
        "0: no bound)",
        group="reliability", metavar="N", zero_is_none=True, validator=_optional_positive,
    )  # fmt: skip
    dead_letter_max_bytes: int | None = _setting(
        256 * MIB, "--dead-letter-max-bytes",
        "keep at most this many bytes of dead-lettered events; past it the oldest expire "
        "(default %(default)s, 256 MiB; 0: no bound)",
        group="reliability", metavar="BYTES", zero_is_none=True, validator=_optional_positive,
    )  # fmt: skip
    # write-through (write_through.py): an event needing nothing but forwarding goes to a plain
    # http sink before its 201, no disk write, while the sink answers faster than this on average
    write_through_below: float | None = _setting(
        0.005, "--write-through-below",
        "forward an event that no rule binds before answering it, without writing it to the "
        "spool, while the sink answers faster than this on average (default %(default)s; 0: "
        "always spool first)",
        group="reliability", metavar="SECONDS", zero_is_none=True, validator=_optional_positive,
    )  # fmt: skip
    write_through_timeout: float = _setting(1.0, validator=_positive)  # then: spooled
    drain_seconds: float = _setting(
        30.0, "--drain-seconds",
        "on shutdown, wait this long for queued events to be forwarded; serve exits within this "
        "+ 20 s whatever died first (default %(default)s)",
        validator=_not_negative,
    )  # fmt: skip

    # -- Kafka in (kafka/consumer.py): the listener's topic, consumed beside the HTTP receiver --
    kafka_bootstrap_servers: str = _setting(
        "", "--kafka-bootstrap-servers",
        "consume lineage events from Kafka at these brokers (host:port,...; default: none, "
        "HTTP only)",
        group="kafka", metavar="HOSTS",
    )  # fmt: skip
    kafka_topics: str = _setting(
        "openlineage", "--kafka-topic",
        "the topic(s) the listener writes to, comma-separated (default %(default)s)",
        group="kafka", metavar="TOPIC[,TOPIC]",
    )  # fmt: skip
    kafka_group_id: str = _setting(
        "lineage-quality", "--kafka-group-id",
        "the consumer group: serve processes of one group split the partitions "
        "(default %(default)s)",
        group="kafka", metavar="GROUP",
    )  # fmt: skip
    # any other librdkafka consumer setting (security.protocol, sasl.*...): --kafka-conf and
    # --kafka-conf-file; the secrets among them are masked in every log line; never in a repr
    kafka_config: Mapping[str, str] = attrs.field(
        factory=dict, repr=False, hash=False, kw_only=True
    )
    # a Kafka message that is not an event is kept as a bounded record beside the dead letters
    # (spool/bad_messages.py): its first bytes, size, SHA-256, topic/partition/offset, reason
    kafka_bad_message_keep_bytes: int = _setting(
        4096, "--kafka-bad-message-keep-bytes",
        "of a Kafka message that is not an event, keep this many of its first bytes (with its "
        "size, SHA-256, topic, partition, offset and why; default %(default)s)",
        group="kafka", metavar="BYTES", validator=_positive,
    )  # fmt: skip
    kafka_bad_messages_max: int | None = _setting(
        1000, "--kafka-bad-messages-max",
        "keep at most N records of Kafka messages that are not events; past it the oldest of "
        "them expire, never a dead-lettered event (default %(default)s; 0: no bound)",
        group="kafka", metavar="N", zero_is_none=True, validator=_optional_positive,
    )  # fmt: skip
    kafka_commit_every: float = _setting(
        0.5, "--kafka-commit-every",
        "commit the offsets of the events kept this often (a rebalance and a stop commit too; "
        "default %(default)s)",
        group="kafka", metavar="SECONDS", validator=_positive,
    )  # fmt: skip

    # -- outputs: result sinks and alert senders, made by outputs/factory.py by `type` ---------
    outputs: tuple[OutputSpec, ...] = attrs.field(default=(), converter=_outputs, kw_only=True)

    # -- alerts (the webhooks are `outputs` of type webhook / slack) ------------------------------
    alert_min_rank: int = _setting(0)  # alerts.parse_min_severity of --alert-min-severity
    marquez_web_url: str | None = _setting(None)  # alerts link to the dataset in this UI
    # a long webhook outage during an alert flood: the newest alerts matter most, so past the
    # bound the oldest undelivered ones expire (counted in a metric, logged)
    alert_max_pending: int | None = _setting(
        10_000, "--alert-max-pending",
        "keep at most N undelivered alerts; past it the oldest expire (default %(default)s; "
        "0: no bound)",
        group="alerts", metavar="N", zero_is_none=True, validator=_optional_positive,
    )  # fmt: skip

    # -- along lineage (the store is the history's: `--history`; lineage/, docs/lineage.md) ----
    upstream: Upstream = attrs.field(
        default=Upstream.WARN,
        metadata=_meta(
            "--upstream",
            "what an output derived from data that failed a rule upstream gets: warn (an "
            "upstreamQuality assertion, severity warn), block (the same, a BLOCK: gate --dataset "
            "exits 1 on it) or off (no lineage kept); default warn",
            group="lineage",
            metavar="warn|block|off",
        ),
        converter=parse_upstream,
        kw_only=True,
    )

    # -- quarantine (the location itself is `--quarantine`) --------------------------------------
    quarantine_max_rows: int = _setting(
        QUARANTINE_MAX_ROWS, "--quarantine-max-rows",
        "at most N rows per rule (default %(default)s)",
        group="quarantine", metavar="N", validator=_positive,
    )  # fmt: skip


DEFAULTS = Settings()


def flags() -> list[attrs.Attribute[Any]]:
    """The settings that are `serve` options, in declaration order."""
    return [f for f in attrs.fields(Settings) if f.metadata.get("flag")]

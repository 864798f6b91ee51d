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

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from lineage_quality.bounds import QUARANTINE_MAX_ROWS, RunBookBounds
from lineage_quality.history.versions import VersionBounds
from lineage_quality.lineage.policy import Upstream, parse_upstream
from lineage_quality.producer.backoff import FORWARD_BACKOFF, Backoff
from lineage_quality.producer.enrich import MAX_ADDED_BYTES
from lineage_quality.rules.history import (
    DEFAULT_MIN_SEASONAL,
    DEFAULT_MIN_STDDEV,
    MAX_RUNS,
    HistoryMinimums,
)
from lineage_quality.samples import DEFAULT_ROWS, MAX_ROWS

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


def _min_history(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 2 <= value <= MAX_RUNS:
        raise ValueError(f"{attribute.name} must be a whole number of runs from 2 to {MAX_RUNS}")


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
class ReceiverSettings:
    """The HTTP receiver: where it listens, its API key, and how much a connection may take."""

    host: str = _setting("127.0.0.1", "--host", "bind address (default %(default)s)")
    port: int = _setting(5055, "--port", "port (default %(default)s; 0: any free port)")
    # the Bearer key senders must present (serve: LINEAGE_QUALITY_API_KEY); never in a repr
    api_key: str | None = attrs.field(default=None, repr=False, kw_only=True)
    max_body: int = _setting(
        16 * MIB, "--max-body-bytes",
        "largest event body, also once inflated (default %(default)s)",
        validator=_positive,
    )  # fmt: skip
    idle_timeout: float = _setting(60.0, validator=_positive)  # a kept-alive connection, idle
    header_timeout: float = _setting(10.0, validator=_positive)  # first byte to end of headers
    body_timeout: float = _setting(60.0, validator=_positive)  # the whole body (no slowloris)
    max_connections: int = _setting(256, validator=_positive)  # more: 503 at once, closed


@attrs.frozen
class SpoolSettings:
    """The durable spool (SQLite), its bounds, and what it keeps aside: the run bookkeeping
    (`runs`) and the dead letters."""

    path: Path = attrs.field(
        default=DEFAULT_SPOOL,
        metadata=_meta("--spool", "durable event spool (SQLite)", metavar="PATH"),
        converter=Path,
        kw_only=True,
    )
    max_events: int | None = _setting(
        100_000, "--spool-max-events",
        "answer 503 past N queued events (default %(default)s; 0: no bound)",
        group="reliability", metavar="N", zero_is_none=True, validator=_optional_positive,
    )  # fmt: skip
    max_bytes: int | None = _setting(
        1024 * MIB, "--spool-max-bytes",
        "answer 503 past this many queued bytes (default %(default)s, 1 GiB; 0: no bound)",
        group="reliability", metavar="BYTES", zero_is_none=True, validator=_optional_positive,
    )  # fmt: skip
    warn_ratio: float = _setting(0.8, validator=_positive)  # warn once this full
    # given back when the disk fills up, so forwarded events can still be deleted (0: none)
    reserve_bytes: int = _setting(4 * MIB, validator=_not_negative)
    reserve_retry: float = _setting(1.0, validator=_not_negative)  # s between rewrites
    runs: RunBookBounds = attrs.field(default=DEFAULT_RUNS, kw_only=True)  # runs API
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


@attrs.frozen
class EvaluationSettings:
    """The workers and each event's evaluation: its deadline, its cancel, what its facets may
    add, the quarantine's rows."""

    workers: int = _setting(
        4, "--workers", "events handled at once, one per run (default %(default)s)",
        group="reliability", validator=_positive,
    )  # fmt: skip
    timeout: float | None = _setting(
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
    warm: bool = _setting(True)  # start the Spark session at start, not at 1st event
    max_added_bytes: int = _setting(
        MAX_ADDED_BYTES, "--max-added-bytes",
        "most bytes of facets one event may gain; past it a dataset's facets are left out and "
        "an ERROR assertion says so (default %(default)s, 8 MiB)",
        metavar="BYTES", validator=_positive,
    )  # fmt: skip
    quarantine_max_rows: int = _setting(
        QUARANTINE_MAX_ROWS, "--quarantine-max-rows",
        "at most N rows per rule (default %(default)s)",
        group="quarantine", metavar="N", validator=_positive,
    )  # fmt: skip
    # Failing-row samples (docs/rules.md, "Failing-row samples"): rows per failed rule unless the
    # contract says, whether they travel in facets unless the contract says (`--facet-samples`),
    # and the file of the masking hash's key (None: generated beside the history store).
    sample_rows: int = _setting(
        DEFAULT_ROWS, "--sample-rows",
        "failing rows sampled per failed rule, unless the contract says (default %(default)s; "
        "0: none)",
        group="samples", metavar="N", validator=attrs.validators.and_(
            _not_negative, attrs.validators.le(MAX_ROWS)
        ),
    )  # fmt: skip
    facet_samples: bool = _setting(False)  # serve --facet-samples
    sample_key_file: Path | None = attrs.field(  # serve --sample-key-file
        default=None, metadata=_meta(None), kw_only=True
    )


@attrs.frozen
class DeliverySettings:
    """Forwarding to the sink: retries, dead-lettering, write-through, the drain at shutdown."""

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
    # a sink that keeps a run's order by itself (Kafka out with idempotence: outbound.py) is
    # handed events without waiting for each answer; this many at most are out at once
    max_in_flight: int = _setting(
        1000, "--max-in-flight",
        "hand at most N events at once to a sink that keeps their order by itself (Kafka out), "
        "each deleted from the spool once the broker acknowledged it and the events before it "
        "in its run (default %(default)s; 1: one at a time)",
        group="reliability", metavar="N", validator=_positive,
    )  # fmt: skip
    drain_seconds: float = _setting(
        30.0, "--drain-seconds", "on shutdown, wait this long for queued events to be forwarded",
        validator=_not_negative,
    )  # fmt: skip


@attrs.frozen
class KafkaSettings:
    """Kafka in (kafka/consumer.py): the listener's topic, consumed beside the HTTP receiver."""

    bootstrap_servers: str = _setting(
        "", "--kafka-bootstrap-servers",
        "consume lineage events from Kafka at these brokers (host:port,...; default: none, "
        "HTTP only)",
        group="kafka", metavar="HOSTS",
    )  # fmt: skip
    topics: str = _setting(
        "openlineage", "--kafka-topic",
        "the topic(s) the listener writes to, comma-separated (default %(default)s)",
        group="kafka", metavar="TOPIC[,TOPIC]",
    )  # fmt: skip
    group_id: str = _setting(
        "lineage-quality", "--kafka-group-id",
        "the consumer group: serve processes of one group split the partitions "
        "(default %(default)s)",
        group="kafka", metavar="GROUP",
    )  # fmt: skip
    # any other librdkafka consumer setting (security.protocol, sasl.*...): --kafka-conf and
    # --kafka-conf-file; the secrets among them are masked in every log line; never in a repr
    config: Mapping[str, str] = attrs.field(factory=dict, repr=False, hash=False, kw_only=True)
    # a Kafka message that is not an event is kept as a bounded record beside the dead letters
    # (spool/bad_messages.py): its first bytes, size, SHA-256, topic/partition/offset, reason
    bad_message_keep_bytes: int = _setting(
        4096, "--kafka-bad-message-keep-bytes",
        "of a Kafka message that is not an event, keep this many of its first bytes (with its "
        "size, SHA-256, topic, partition, offset and why; default %(default)s)",
        group="kafka", metavar="BYTES", validator=_positive,
    )  # fmt: skip
    bad_messages_max: int | None = _setting(
        1000, "--kafka-bad-messages-max",
        "keep at most N records of Kafka messages that are not events; past it the oldest of "
        "them expire, never a dead-lettered event (default %(default)s; 0: no bound)",
        group="kafka", metavar="N", zero_is_none=True, validator=_optional_positive,
    )  # fmt: skip
    commit_every: float = _setting(
        0.5, "--kafka-commit-every",
        "commit the offsets of the events kept this often (a rebalance and a stop commit too; "
        "default %(default)s)",
        group="kafka", metavar="SECONDS", validator=_positive,
    )  # fmt: skip
    # Kafka in to Kafka out without the spool for what needs nothing else (kafka/relay.py)
    relay: str = _setting(
        "on", "--kafka-relay",
        "with Kafka out as the sink, relay the events that need nothing but forwarding straight "
        "from Kafka in, each offset committed once Kafka out acknowledged its event (default "
        "%(default)s; off: every event through the spool)",
        group="kafka", metavar="on|off", validator=attrs.validators.in_(("on", "off")),
    )  # fmt: skip


@attrs.frozen
class OutputSettings:
    """The outputs of results besides the event (made by outputs/factory.py by `type`) and the
    alerts."""

    specs: tuple[OutputSpec, ...] = attrs.field(default=(), converter=_outputs, kw_only=True)
    alert_min_rank: int = _setting(0)  # alerts.parse_min_severity of --alert-min-severity
    marquez_web_url: str | None = _setting(None)  # alerts link to the dataset in this UI
    view_url: str | None = _setting(
        None, "--view-url",
        "the quality view's address as the people who get alerts reach it (e.g. "
        "https://quality.example.com): alerts link to the dataset's page there",
        group="alerts", metavar="URL",
    )  # fmt: skip
    # a long webhook outage during an alert flood: the newest alerts matter most, so past the
    # bound the oldest undelivered ones expire (counted in a metric, logged)
    alert_max_pending: int | None = _setting(
        10_000, "--alert-max-pending",
        "keep at most N undelivered alerts; past it the oldest expire (default %(default)s; "
        "0: no bound)",
        group="alerts", metavar="N", zero_is_none=True, validator=_optional_positive,
    )  # fmt: skip


@attrs.frozen
class HistorySettings:
    """History rules: the history a stddev or seasonal rule needs before it can fail."""

    # the minimum history of a stddev or seasonal rule that declares no `minHistory`: before it,
    # SKIPPED (a band from 2-3 runs is too tight: normal values fail it)
    min_stddev: int = _setting(
        DEFAULT_MIN_STDDEV, "--history-min-stddev",
        "a stddev history rule is SKIPPED until its baseline holds N runs, whatever a smaller "
        "minRuns says (a rule's minHistory wins; default %(default)s)",
        group="history", metavar="N", validator=_min_history,
    )  # fmt: skip
    min_seasonal: int = _setting(
        DEFAULT_MIN_SEASONAL, "--history-min-seasonal",
        "a seasonal history rule is SKIPPED until N runs of the same weekday and hour are kept "
        "(at most its window; a rule's minHistory wins; default %(default)s)",
        group="history", metavar="N", validator=_min_history,
    )  # fmt: skip

    # one evaluation per dataset version (evaluation/reuse.py): how many versions' verdicts
    # are kept for later runs, and for how long
    reuse_max_versions: int = _setting(
        VersionBounds().max_rows, "--reuse-max-versions",
        "keep the verdicts of at most N dataset versions: a version already evaluated with the "
        "same rules is not scanned again by later runs or other producers sharing --history "
        "(0: every run evaluates again; default %(default)s)",
        group="history", metavar="N", validator=_not_negative,
    )  # fmt: skip
    reuse_days: float = _setting(
        VersionBounds().days, "--reuse-days",
        "a version's verdicts are reused for D days after its evaluation (default %(default)s)",
        group="history", metavar="D", validator=_positive,
    )  # fmt: skip

    @property
    def minimums(self) -> HistoryMinimums:
        return HistoryMinimums(self.min_stddev, self.min_seasonal)

    @property
    def reuse_bounds(self) -> VersionBounds | None:
        """The bounds of the version verdicts; None when none are reused."""
        if not self.reuse_max_versions:
            return None
        return VersionBounds(max_rows=self.reuse_max_versions, days=self.reuse_days)


@attrs.frozen
class LineageSettings:
    """Along lineage (the store is the history's: `--history`; lineage/, docs/lineage.md)."""

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


@attrs.frozen
class Settings:
    """What one producer does, and how much it may hold, in groups (one attrs object each).
    Frozen: `evolve` to change. `Settings.of(workers=1, spool=path, ...)` takes the flat names
    the command line and `attach` use (`FLAT`: each one's group and field)."""

    receiver: ReceiverSettings = attrs.field(factory=ReceiverSettings)
    spool: SpoolSettings = attrs.field(factory=SpoolSettings)
    evaluation: EvaluationSettings = attrs.field(factory=EvaluationSettings)
    delivery: DeliverySettings = attrs.field(factory=DeliverySettings)
    kafka: KafkaSettings = attrs.field(factory=KafkaSettings)
    outputs: OutputSettings = attrs.field(factory=OutputSettings)
    history: HistorySettings = attrs.field(factory=HistorySettings)
    lineage: LineageSettings = attrs.field(factory=LineageSettings)

    @classmethod
    def of(cls, **flat: Any) -> Settings:
        """Settings from flat names (`spool_max_events=...`), each into its group."""
        return cls()._evolved(flat)

    def evolve(self, **flat: Any) -> Settings:
        """A copy with the settings named flat (`workers=2`) changed; a name that is no setting
        is a TypeError naming it."""
        return self._evolved(flat)

    def _evolved(self, flat: Mapping[str, Any]) -> Settings:
        changes: dict[str, dict[str, Any]] = {}
        for name, value in flat.items():
            where = FLAT.get(name)
            if where is None:
                raise TypeError(f"no setting named {name!r}")
            changes.setdefault(where[0], {})[where[1]] = value
        groups = {}
        for group, fields in changes.items():
            try:
                groups[group] = attrs.evolve(getattr(self, group), **fields)
            except ValueError as exc:  # a validator's words name the flat setting, as flags do
                raise ValueError(_flat_words(str(exc), group)) from exc
        return attrs.evolve(self, **groups)

    def get(self, name: str) -> Any:
        """The setting of flat name `name` (`spool_max_events`)."""
        group, field = FLAT[name]
        return getattr(getattr(self, group), field)


# Each flat name (a `serve` flag's dest, an `attach` keyword, `Settings.of`) -> (group, field).
FLAT: dict[str, tuple[str, str]] = {
    "host": ("receiver", "host"),
    "port": ("receiver", "port"),
    "api_key": ("receiver", "api_key"),
    "max_body": ("receiver", "max_body"),
    "idle_timeout": ("receiver", "idle_timeout"),
    "header_timeout": ("receiver", "header_timeout"),
    "body_timeout": ("receiver", "body_timeout"),
    "max_connections": ("receiver", "max_connections"),
    "spool": ("spool", "path"),
    "spool_max_events": ("spool", "max_events"),
    "spool_max_bytes": ("spool", "max_bytes"),
    "spool_warn_ratio": ("spool", "warn_ratio"),
    "spool_reserve_bytes": ("spool", "reserve_bytes"),
    "spool_reserve_retry": ("spool", "reserve_retry"),
    "runs": ("spool", "runs"),
    "dead_letter_max_events": ("spool", "dead_letter_max_events"),
    "dead_letter_max_bytes": ("spool", "dead_letter_max_bytes"),
    "workers": ("evaluation", "workers"),
    "evaluation_timeout": ("evaluation", "timeout"),
    "cancel_after": ("evaluation", "cancel_after"),
    "kill_after_cancel": ("evaluation", "kill_after_cancel"),
    "late_event_type": ("evaluation", "late_event_type"),
    "warm_evaluator": ("evaluation", "warm"),
    "max_added_bytes": ("evaluation", "max_added_bytes"),
    "quarantine_max_rows": ("evaluation", "quarantine_max_rows"),
    "sample_rows": ("evaluation", "sample_rows"),
    "facet_samples": ("evaluation", "facet_samples"),
    "sample_key_file": ("evaluation", "sample_key_file"),
    "retry": ("delivery", "retry"),
    "dead_letter_after": ("delivery", "dead_letter_after"),
    "poison_after": ("delivery", "poison_after"),
    "write_through_below": ("delivery", "write_through_below"),
    "write_through_timeout": ("delivery", "write_through_timeout"),
    "max_in_flight": ("delivery", "max_in_flight"),
    "drain_seconds": ("delivery", "drain_seconds"),
    "kafka_bootstrap_servers": ("kafka", "bootstrap_servers"),
    "kafka_topics": ("kafka", "topics"),
    "kafka_group_id": ("kafka", "group_id"),
    "kafka_config": ("kafka", "config"),
    "kafka_bad_message_keep_bytes": ("kafka", "bad_message_keep_bytes"),
    "kafka_bad_messages_max": ("kafka", "bad_messages_max"),
    "kafka_commit_every": ("kafka", "commit_every"),
    "kafka_relay": ("kafka", "relay"),
    "outputs": ("outputs", "specs"),
    "alert_min_rank": ("outputs", "alert_min_rank"),
    "marquez_web_url": ("outputs", "marquez_web_url"),
    "view_url": ("outputs", "view_url"),
    "alert_max_pending": ("outputs", "alert_max_pending"),
    "history_min_stddev": ("history", "min_stddev"),
    "history_min_seasonal": ("history", "min_seasonal"),
    "reuse_max_versions": ("history", "reuse_max_versions"),
    "reuse_days": ("history", "reuse_days"),
    "upstream": ("lineage", "upstream"),
}


DEFAULTS = Settings()


def _flat_words(message: str, group: str) -> str:
    """`message` with the fields of `group` it names written as their flat names."""
    for flat, (where, field) in FLAT.items():
        if where == group and field != flat:
            message = re.sub(rf"(?<![\w.]){field}\b", flat, message)
    return message


def flags() -> list[tuple[str, attrs.Attribute[Any]]]:
    """The settings that are `serve` options, in declaration order: (flat name, its field)."""
    out = []
    for name, (group, field) in FLAT.items():
        found = attrs.fields_dict(type(getattr(DEFAULTS, group)))[field]
        if found.metadata.get("flag"):
            out.append((name, found))
    return out

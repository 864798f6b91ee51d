"""`lineage-quality serve`: receive OpenLineage events, add quality facets, forward (the
producer, docs/producer.md), with every option that is a setting made from Settings."""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lineage_quality.cli.datahub_options import add_datahub_options, datahub_specs
from lineage_quality.cli.history import add_history_flags, history_store, history_where
from lineage_quality.cli.options import (
    add_shacl_flags,
    add_spark_conf_options,
    shacl_options,
    spark_conf,
)
from lineage_quality.errors import ConfigError
from lineage_quality.version import __version__

if TYPE_CHECKING:
    from collections.abc import Sequence

    from lineage_quality.contracts.binding import BoundRules
    from lineage_quality.engine.quarantine import QuarantineConfig
    from lineage_quality.evaluation.reuse import Reuse
    from lineage_quality.lineage.keeper import LineageKeeper
    from lineage_quality.producer import Producer
    from lineage_quality.producer.kafka.consumer import KafkaIntake
    from lineage_quality.producer.kafka.relay import Relay
    from lineage_quality.producer.settings import OutputSpec, Settings
    from lineage_quality.producer.shared_runs import SharedRuns
    from lineage_quality.producer.shutdown import Stopping
    from lineage_quality.samples import Sampling

log = logging.getLogger("lineage_quality")
_KAFKA_STOP = 5.0  # s: Kafka in's commit and leave, at most (the broker may be gone)
_JVM_STOP = 3.0  # s: the evaluator's session stopped and its JVM ended, at most


def add_parser(sub: Any) -> None:
    """The `serve` command and its options."""
    serve = sub.add_parser("serve", help="receive OpenLineage events, add quality facets, forward")
    serve.add_argument(
        "--contracts",
        action="append",
        required=True,
        metavar="PATH",
        help="contract file or folder (repeatable)",
    )
    serve.add_argument(
        "--allow-no-auth",
        action="store_true",
        help="listen on a non-loopback --host without LINEAGE_QUALITY_API_KEY (logged loudly)",
    )
    serve.add_argument(
        "--openlineage-config",
        metavar="FILE",
        help="openlineage.yml saying where to forward (else the usual lookup)",
    )
    serve.add_argument(
        "--spark-master",
        help="Spark master for evaluation: the same as --spark-conf spark.master=... "
        "(default local[*]; on spark:// at most 2 cores unless spark.cores.max says more)",
    )
    add_spark_conf_options(serve)
    add_shacl_flags(serve)
    groups = {"reliability": serve.add_argument_group("reliability", "docs/reliability.md")}
    quarantine = groups["quarantine"] = serve.add_argument_group("quarantine", "docs/quarantine.md")
    quarantine.add_argument(
        "--quarantine",
        metavar="PATH",
        help="write the failing rows of failed QUARANTINE rules here (Parquet, by run id)",
    )
    datahub = serve.add_argument_group(
        "DataHub assertions", "needs pip install 'lineage-quality[datahub]'; docs/datahub.md"
    )
    add_datahub_options(datahub)
    serve.add_argument(
        "--output",
        action="append",
        default=[],
        metavar="JSON",
        help='an output by type, e.g. \'{"type": "webhook", "url": "https://..."}\' '
        "(repeatable; types and options: docs/producer.md, Outputs)",
    )
    groups["alerts"] = _add_alert_flags(serve)
    groups["lineage"] = serve.add_argument_group("along lineage", "docs/lineage.md")
    groups["kafka"] = _add_kafka_flags(serve)
    groups["history"] = add_history_flags(serve)
    groups["samples"] = _add_sample_flags(serve)
    _add_settings_flags(serve, groups)  # once every group they go to exists
    serve.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from lineage_quality.contracts import load_contracts
    from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool, gc_policy
    from lineage_quality.producer.alerts import parse_min_severity
    from lineage_quality.producer.outputs.factory import build_outputs, secrets_of
    from lineage_quality.producer.secrets import (
        client_secrets,
        environment_secrets,
        redact_logs,
        scrub_environment,
        transport_secrets,
    )
    from lineage_quality.producer.shutdown import Stopping, exit_now

    api_key = os.environ.get("LINEAGE_QUALITY_API_KEY") or None
    _require_key_off_loopback(args.host, api_key, args.allow_no_auth)
    redact = redact_logs(environment_secrets(os.environ))
    # openlineage-python logs its transport config (custom headers too) at debug level
    logging.getLogger("openlineage.client.transport").setLevel(logging.INFO)
    if args.openlineage_config:
        os.environ["OPENLINEAGE_CONFIG"] = args.openlineage_config
    bindings = load_contracts(args.contracts, shacl=shacl_options(args))
    conf = spark_conf(args)
    # e.g. spark.hadoop.fs.s3a.secret.key: never in a log line
    redact.add(
        v
        for k, v in conf.items()
        if any(w in k.lower() for w in ("secret", "password", "token", "key", "credential"))
    )
    # every output (DataHub, alerts) made from the settings by type; fails here when misconfigured
    settings = _settings(args, api_key, parse_min_severity(args.alert_min_severity))
    redact.add(secrets_of(settings.outputs.specs))  # Slack URLs, a DataHub token
    redact.add(client_secrets(settings.kafka.config))  # Kafka in: sasl.password...
    outputs = build_outputs(settings, bindings)
    forwarder = Forwarder()
    redact.add(transport_secrets(forwarder.transport))
    history = history_store(args)  # libpq reads PGPASSWORD (or PGPASSFILE) now, once
    lineage = _lineage(args, settings, bindings)  # the store's lineage tables, own connection
    shared = _shared_runs(args)  # and its run verdicts: every producer sharing it sees them
    # Every secret has been read: none may reach the evaluator's JVM (started later).
    scrubbed = scrub_environment(os.environ)
    if scrubbed:
        log.info("removed %s from the environment of the evaluator", ", ".join(scrubbed))
    producer = Producer(
        Evaluator(
            bindings,
            master=args.spark_master,
            conf=conf,
            quarantine=_quarantine(args, settings),
            history=history,
            history_minimums=settings.history.minimums,
            reuse=_reuse(args, settings),
            sampling=_sampling(args, settings),
        ),
        forwarder,
        Spool(settings.spool.path, settings),
        settings,
        result_sinks=outputs.result_sinks,
        alerts=outputs.alerts,
        lineage=lineage,
        shared=shared,
    )
    _add_view(args, producer, settings)  # the quality view at the root of the port (docs/view.md)
    kafka_in = _kafka_intake(settings, producer)  # fails here when misconfigured
    stopping = Stopping(settings.delivery.drain_seconds)
    stopping.install()  # the first SIGTERM/SIGINT starts a stop bounded in time (shutdown.py)
    producer.start()
    if kafka_in is not None:
        kafka_in.start()  # after the workers: what it hands over is taken at once
    print(
        f"lineage-quality {__version__} listening on {producer.url}/api/v1/lineage "
        f"({sum(len(b.rules) for b in bindings)} rules on {len(bindings)} binding(s))",
        flush=True,
    )
    gc_policy.steady()  # started: what exists now is never collected (gc_policy.py)
    stopping.requested.wait()
    exit_now(_stop(stopping, settings, producer, kafka_in))


def _stop(
    stopping: Stopping, settings: Settings, producer: Producer, kafka_in: KafkaIntake | None
) -> int:
    """Every step of the stop, each within its share of the bound (shutdown.py); the exit
    code: 0, or 1 when a step failed."""
    try:
        if kafka_in is not None:  # first: what it kept is committed, its partitions go to others
            stopping.now("stopping Kafka in")
            kafka_in.stop(timeout=stopping.left(_KAFKA_STOP))
        producer.stop(
            drain_timeout=stopping.left(settings.delivery.drain_seconds),
            deadline=stopping.deadline - _JVM_STOP - 1.0,
            step=stopping.now,
        )
        stopping.now("stopping the evaluator's JVM")
        producer.evaluator.close(stopping.left(_JVM_STOP))
    except Exception:
        log.exception("stopping failed; what was not forwarded is in the spool")
        return 1
    log.info("stopped")
    return 0


def _lineage(
    args: argparse.Namespace, settings: Settings, bindings: Sequence[BoundRules]
) -> LineageKeeper | None:
    """The lineage kept in the history store (none with --history off or --upstream off)."""
    from lineage_quality.lineage.critical import critical_of
    from lineage_quality.lineage.keeper import LineageKeeper
    from lineage_quality.lineage.policy import Upstream
    from lineage_quality.lineage.store import open_lineage

    where = history_where(args)
    if where is None or settings.lineage.upstream is Upstream.OFF:
        return None
    store = open_lineage(where, password_file=args.history_password_file)
    return LineageKeeper(store, settings.lineage.upstream, critical_of(bindings))


def _add_view(args: argparse.Namespace, producer: Producer, settings: Settings) -> None:
    """The quality view's pages and API over the history store (none with --history off)."""
    from lineage_quality.view.data import Links
    from lineage_quality.view.open import open_stores
    from lineage_quality.view.routes import view_routes

    where = history_where(args)
    if where is None:
        return
    links = Links(settings.outputs.marquez_web_url, getattr(args, "datahub_web_url", None))
    producer.receiver.add(view_routes(open_stores(where, links, args.history_password_file)))


def _shared_runs(args: argparse.Namespace) -> SharedRuns | None:
    """The run verdicts kept in the history store (none with --history off)."""
    from lineage_quality.producer.shared_runs import open_shared_runs

    where = history_where(args)
    if where is None:
        return None
    return open_shared_runs(where, password_file=args.history_password_file)


def _reuse(args: argparse.Namespace, settings: Settings) -> Reuse | None:
    """One evaluation per dataset version, kept in the history store (none with --history off
    or --reuse-max-versions 0)."""
    from lineage_quality.evaluation.reuse import Reuse
    from lineage_quality.history.versions import open_version_verdicts

    where = history_where(args)
    bounds = settings.history.reuse_bounds
    if where is None or bounds is None:
        return None
    store = open_version_verdicts(where, bounds, password_file=args.history_password_file)
    return Reuse(store)


def _kafka_intake(settings: Settings, producer: Producer) -> KafkaIntake | None:
    """Kafka in, when --kafka-bootstrap-servers (or a bootstrap.servers setting) says so."""
    from lineage_quality.producer.kafka.consumer import KafkaIntake, wanted

    if not wanted(settings):
        return None
    return KafkaIntake(
        settings,
        producer.intake.accept,
        producer.spool,
        producer.metrics,
        producer.intake.accept_many,
        _relay(settings, producer),
    )


def _relay(settings: Settings, producer: Producer) -> Relay | None:
    """Kafka in's relay to Kafka out (kafka/relay.py), when the sink is Kafka out and
    `--kafka-relay` is on; its events out count in the in-flight gauge."""
    from lineage_quality.producer.kafka.offsets import Offsets
    from lineage_quality.producer.kafka.relay import Relay

    outbound = producer.delivery.outbound
    if outbound is None or settings.kafka.relay != "on":
        return None
    # a run's events go out together: only through a producer that leaves no gap
    # (kafka/transport.py); a sink without one gets no relay
    gapless = getattr(outbound.transport, "gapless", None)
    if not callable(gapless):
        return None
    relay = Relay(gapless(), producer.intake, Offsets(), outbound.limit)
    producer.metrics.watch_in_flight(lambda: outbound.out + relay.out)
    return relay


def _add_kafka_flags(serve: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    kafka = serve.add_argument_group(
        "Kafka in", "the listener's Kafka transport as input; docs/producer.md, Kafka in"
    )
    kafka.add_argument(
        "--kafka-conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a librdkafka consumer setting, e.g. security.protocol=SASL_SSL (repeatable; "
        "secrets belong in --kafka-conf-file: the command line shows in ps)",
    )
    kafka.add_argument(
        "--kafka-conf-file",
        action="append",
        default=[],
        metavar="FILE",
        help="librdkafka consumer settings in a Java properties file (key=value or key: value "
        "lines, # comments), read before --kafka-conf; errors name its line, never a value",
    )
    return kafka


def _settings(args: argparse.Namespace, api_key: str | None, alert_min_rank: int) -> Settings:
    """The producer's settings: every `serve` option that is a setting (see settings.flags),
    and what the CLI reads elsewhere (the key from the environment, the alert threshold, the
    outputs from `--datahub-*` and `--alert-*`)."""
    from lineage_quality.producer.kafka.conf_file import settings_from_pairs
    from lineage_quality.producer.settings import Settings, flags

    given = {name: getattr(args, name) for name, _ in flags()}
    outputs = _outputs(args)
    kafka = settings_from_pairs(args.kafka_conf, args.kafka_conf_file)
    try:
        return Settings.of(
            **given,
            outputs=outputs,
            kafka_config=kafka,
            api_key=api_key,
            alert_min_rank=alert_min_rank,
            marquez_web_url=args.marquez_web_url,
            facet_samples=args.facet_samples,
            sample_key_file=Path(args.sample_key_file) if args.sample_key_file else None,
        )
    except ValueError as exc:  # a validator's: e.g. --quarantine-max-rows 0
        raise ConfigError(f"invalid serve option: {exc}") from exc


def _add_settings_flags(
    serve: argparse.ArgumentParser, groups: dict[str, argparse._ArgumentGroup]
) -> None:
    """The options of `serve` that are settings: name, default and help from settings.py."""
    from lineage_quality.producer.settings import DEFAULTS, flags

    for name, field in flags():
        meta = field.metadata
        where = groups[meta["group"]] if meta["group"] else serve
        default = DEFAULTS.get(name)
        kind = type(default) if default is not None else float
        where.add_argument(
            meta["flag"],
            dest=name,
            type=kind,
            default=0 if default is None else default,
            metavar=meta["metavar"],
            help=meta["help"] or None,
        )


def _require_key_off_loopback(host: str, api_key: str | None, allowed: bool) -> None:
    """Anyone who can reach a non-loopback address could post events (and make the producer
    read data): refuse to listen there without a key unless told to."""
    if api_key or _loopback(host):
        return
    if not allowed:
        raise ConfigError(
            f"refusing to listen on {host} without an API key: set LINEAGE_QUALITY_API_KEY "
            "(the listener sends it with spark.openlineage.transport.auth.type=api_key), or pass "
            "--allow-no-auth to accept unauthenticated events from the network"
        )
    log.warning(
        "LISTENING ON %s WITHOUT AN API KEY (--allow-no-auth): anyone who can reach it can post "
        "lineage events",
        host,
    )


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _sampling(args: argparse.Namespace, settings: Settings) -> Sampling:
    from lineage_quality.samples import sampling_of

    evaluation = settings.evaluation
    return sampling_of(
        evaluation.sample_rows,
        evaluation.facet_samples,
        evaluation.sample_key_file,
        history_where(args),
        settings.spool.path,
    )


def _add_sample_flags(serve: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    samples = serve.add_argument_group("failing-row samples", "docs/rules.md")
    samples.add_argument(
        "--facet-samples",
        action="store_true",
        help="put failing-row samples in the assertions' facets, unless a contract says "
        "otherwise (lineage events travel far: off by default)",
    )
    samples.add_argument(
        "--sample-key-file",
        metavar="FILE",
        help="the key of the hash masking personal columns in samples (hex; made when missing; "
        "default: beside the history store, else the spool)",
    )
    return samples


def _quarantine(args: argparse.Namespace, settings: Settings) -> QuarantineConfig | None:
    from lineage_quality.engine.quarantine import QuarantineConfig

    if not args.quarantine:
        return None
    return QuarantineConfig(args.quarantine, settings.evaluation.quarantine_max_rows)


def _outputs(args: argparse.Namespace) -> list[OutputSpec]:
    """The outputs the flags ask for, as `Settings.outputs` (built by outputs/factory.py):
    `--datahub-gms` -> datahub-rest, `--datahub-file` -> datahub-file (both take
    `--datahub-env` / `--datahub-platform-instance`), `--alert-webhook` -> webhook,
    `--alert-slack-webhook` -> slack; then each `--output` JSON as it is."""
    from lineage_quality.producer.settings import OutputSpec

    spool = Path(args.spool)  # the assertions' state lives beside the spool
    state = spool.with_name(spool.stem + ".datahub-assertions.json")
    specs = datahub_specs(args, state, args.marquez_web_url)
    specs += [OutputSpec("webhook", {"url": url}) for url in args.alert_webhook]
    specs += [OutputSpec("slack", {"url": url}) for url in args.alert_slack_webhook]
    for text in args.output:
        try:
            specs.append(OutputSpec.of(json.loads(text)))
        except ValueError as exc:  # not JSON, or not an object with a "type"
            raise ConfigError(f"--output: {exc}") from exc
    return specs


def _add_alert_flags(serve: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    alerts = serve.add_argument_group("alerts", "docs/operations.md")
    alerts.add_argument(
        "--alert-webhook",
        action="append",
        default=[],
        metavar="URL",
        help="POST a JSON alert here for failed rules whose action alerts (repeatable)",
    )
    alerts.add_argument(
        "--alert-slack-webhook",
        action="append",
        default=[],
        metavar="URL",
        help="Slack incoming webhook for the same alerts (repeatable)",
    )
    alerts.add_argument(
        "--alert-min-severity",
        choices=["info", "warn", "error"],
        default="info",
        help="alert only for rules of this severity or above (default info: all)",
    )
    alerts.add_argument(
        "--marquez-web-url",
        metavar="URL",
        help="the Marquez web UI (e.g. http://localhost:3000): alerts link to the dataset",
    )
    return alerts

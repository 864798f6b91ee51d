"""`lineage-quality serve | check | demo`."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lineage_quality.errors import ConfigError, LineageQualityError
from lineage_quality.history_cli import add_history_flags, history_store
from lineage_quality.history_cli import add_parser as add_history_parser
from lineage_quality.logformat import configure as configure_logging
from lineage_quality.masking import masked
from lineage_quality.version import __version__

if TYPE_CHECKING:
    from lineage_quality.contracts import BoundRules
    from lineage_quality.contracts.shacl import ShaclOptions
    from lineage_quality.engine.quarantine import QuarantineConfig
    from lineage_quality.producer.alert_sender import AlertSender
    from lineage_quality.producer.result_sinks import ResultSink
    from lineage_quality.producer.settings import Settings

log = logging.getLogger("lineage_quality")


def _serve(args: argparse.Namespace) -> int:
    from lineage_quality.contracts import load_contracts
    from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
    from lineage_quality.producer.alerts import parse_min_severity
    from lineage_quality.producer.secrets import (
        environment_secrets,
        redact_logs,
        scrub_environment,
        transport_secrets,
    )

    api_key = os.environ.get("LINEAGE_QUALITY_API_KEY") or None
    _require_key_off_loopback(args.host, api_key, args.allow_no_auth)
    redact = redact_logs(environment_secrets(os.environ))
    # openlineage-python logs its transport config (custom headers too) at debug level
    logging.getLogger("openlineage.client.transport").setLevel(logging.INFO)
    if args.openlineage_config:
        os.environ["OPENLINEAGE_CONFIG"] = args.openlineage_config
    bindings = load_contracts(args.contracts, shacl=_shacl_options(args))
    spark_conf = _spark_conf(args)
    # e.g. spark.hadoop.fs.s3a.secret.key: never in a log line
    redact.add(
        v
        for k, v in spark_conf.items()
        if any(w in k.lower() for w in ("secret", "password", "token", "key", "credential"))
    )
    result_sinks = _datahub_sinks(args, bindings)  # fails here when misconfigured
    settings = _settings(args, api_key, parse_min_severity(args.alert_min_severity))
    alerts = _alert_sender(args, settings)
    redact.add([*args.alert_webhook, *args.alert_slack_webhook])  # Slack URLs are secrets
    forwarder = Forwarder()
    redact.add(transport_secrets(forwarder.transport))
    history = history_store(args)  # libpq reads PGPASSWORD (or PGPASSFILE) now, once
    # Every secret has been read: none may reach the evaluator's JVM (started later).
    scrubbed = scrub_environment(os.environ)
    if scrubbed:
        log.info("removed %s from the environment of the evaluator", ", ".join(scrubbed))
    producer = Producer(
        Evaluator(
            bindings,
            master=args.spark_master,
            conf=spark_conf,
            quarantine=_quarantine(args, settings),
            history=history,
        ),
        forwarder,
        Spool(settings.spool, settings),
        settings,
        result_sinks=result_sinks,
        alerts=alerts,
    )
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    producer.start()
    print(
        f"lineage-quality {__version__} listening on {producer.url}/api/v1/lineage "
        f"({sum(len(b.rules) for b in bindings)} rules on {len(bindings)} binding(s))",
        flush=True,
    )
    stop.wait()
    producer.stop(drain_timeout=settings.drain_seconds)
    return 0


def _settings(args: argparse.Namespace, api_key: str | None, alert_min_rank: int) -> Settings:
    """The producer's settings: every `serve` option that is a setting (see settings.flags),
    and what the CLI reads elsewhere (the key from the environment, the alert threshold)."""
    from lineage_quality.producer.settings import Settings, flags

    given = {f.name: getattr(args, f.name) for f in flags()}
    try:
        return Settings(
            **given,
            api_key=api_key,
            alert_min_rank=alert_min_rank,
            marquez_web_url=args.marquez_web_url,
        )
    except ValueError as exc:  # a validator's: e.g. --quarantine-max-rows 0
        raise ConfigError(f"invalid serve option: {exc}") from exc


def _add_settings_flags(
    serve: argparse.ArgumentParser, groups: dict[str, argparse._ArgumentGroup]
) -> None:
    """The options of `serve` that are settings: name, default and help from settings.py."""
    from lineage_quality.producer.settings import DEFAULTS, flags

    for field in flags():
        meta = field.metadata
        where = groups[meta["group"]] if meta["group"] else serve
        default = getattr(DEFAULTS, field.name)
        kind = type(default) if default is not None else float
        where.add_argument(
            meta["flag"],
            dest=field.name,
            type=kind,
            default=0 if default is None else default,
            metavar=meta["metavar"],
            help=meta["help"] or None,
        )


def _spark_conf(args: argparse.Namespace) -> dict[str, str]:
    from lineage_quality.evaluation.spark_conf import evaluator_conf

    return evaluator_conf(args.properties_file, args.spark_conf or [])


def _add_spark_conf_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--spark-conf",
        action="append",
        metavar="KEY=VALUE",
        help="a Spark setting for the evaluator (repeatable): metastore, object stores, catalogs",
    )
    parser.add_argument(
        "--properties-file",
        metavar="FILE",
        help="Spark settings for the evaluator in spark-defaults format (--spark-conf wins)",
    )


def _gate(args: argparse.Namespace) -> int:
    """Exit 0 when no BLOCK rule of the run failed, 1 when one did (listing them), 2 when it
    cannot tell (unknown run, still pending after --wait, no answer)."""
    import json
    import time
    import urllib.error
    import urllib.request

    from lineage_quality.inert import inert
    from lineage_quality.producer.run_verdicts import describe

    key = os.environ.get("LINEAGE_QUALITY_API_KEY")
    if args.api_key_file:
        key = Path(args.api_key_file).read_text().strip()
    url = f"{args.url.rstrip('/')}/api/v1/runs/{urllib.parse.quote(args.run_id, safe='')}"
    deadline = time.monotonic() + args.wait
    status, doc = 0, {}
    while True:
        request = urllib.request.Request(url)
        if key:
            request.add_header("Authorization", f"Bearer {key}")
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                status, doc = answer.status, json.loads(answer.read() or b"{}")
        except urllib.error.HTTPError as exc:
            status, doc = exc.code, {}
        except OSError as exc:
            status, doc = 0, {"error": str(exc)}
        if status == 200 or status in (401, 403) or time.monotonic() >= deadline:
            break
        time.sleep(min(2.0, max(0.1, deadline - time.monotonic())))
    if status != 200:
        why = {202: "still being evaluated", 404: "unknown run", 401: "wrong or missing API key"}
        print(
            inert(
                f"lineage-quality gate: run {args.run_id}: "
                f"{why.get(status, doc.get('error') or f'HTTP {status}')} (after {args.wait:g}s)"
            ),
            file=sys.stderr,
        )
        return 2
    rows = doc.get("verdicts") or []
    if args.job:
        rows = [r for r in rows if r.get("job") == args.job]
    from lineage_quality.producer.run_verdicts import blocking

    failed = blocking(rows)
    for row in failed:  # names and messages from events: no escape sequence to the terminal
        print(f"BLOCK {inert(describe(row))}")
    print(
        inert(f"run {args.run_id}: {len(rows)} verdict(s), {len(failed)} failed BLOCK rule(s)"),
        file=sys.stderr,
    )
    return 1 if failed else 0


def _dead_letters(args: argparse.Namespace) -> int:
    from lineage_quality.dead_letter_cli import dead_letters

    return dead_letters(args)


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


def _quarantine(args: argparse.Namespace, settings: Settings) -> QuarantineConfig | None:
    from lineage_quality.engine.quarantine import QuarantineConfig

    if not args.quarantine:
        return None
    return QuarantineConfig(args.quarantine, settings.quarantine_max_rows)


def _datahub_sinks(args: argparse.Namespace, bindings: Sequence[BoundRules]) -> list[ResultSink]:
    """DataHub assertion sinks from `--datahub-*` (token from DATAHUB_GMS_TOKEN)."""
    from lineage_quality.datahub.build import build_sink
    from lineage_quality.datahub.config import DataHubConfig

    config = DataHubConfig.from_options(
        gms_url=args.datahub_gms,
        file=args.datahub_file,
        env=args.datahub_env,
        platform_instance=args.datahub_platform_instance,
    )
    if not config.enabled:
        if args.datahub_env or args.datahub_platform_instance:
            raise ConfigError(
                "--datahub-env/--datahub-platform-instance need --datahub-gms or --datahub-file"
            )
        return []
    return [build_sink(config, bindings)]


def _shacl_options(args: argparse.Namespace) -> ShaclOptions:
    from lineage_quality.contracts.shacl import ASSERTION_TYPES, ShaclOptions

    types = {}
    if args.shacl_assertion_types:
        chosen = {t.strip() for t in args.shacl_assertion_types.split(",") if t.strip()}
        unknown = chosen - set(ASSERTION_TYPES)
        if unknown:
            raise ConfigError(
                f"--shacl-assertion-types: unknown {', '.join(sorted(unknown))}; "
                f"known: {', '.join(ASSERTION_TYPES)}"
            )
        types = {t: t in chosen for t in ASSERTION_TYPES}
    return ShaclOptions(create_assertions=args.shacl_assertions, assertion_types=types)


def _add_shacl_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--shacl-assertions",
        action="store_true",
        help="turn SHACL constraints into rules (off by default, as in the seed)",
    )
    parser.add_argument(
        "--shacl-assertion-types",
        metavar="LIST",
        help="comma list of required_fields,field_size,value_checks (default all)",
    )


def _check(args: argparse.Namespace) -> int:
    from lineage_quality.check import run_check

    return run_check(
        Path(args.contract),
        args.dataset,
        args.format,
        args.output,
        args.object,
        _shacl_options(args),
        args.spark_master,
        spark_conf=_spark_conf(args),
    )


def _bindings(args: argparse.Namespace) -> int:
    import json

    from lineage_quality.bindings_report import read_events, seen_datasets, to_json, to_text
    from lineage_quality.contracts import load_contracts

    bindings = load_contracts(args.contracts, shacl=_shacl_options(args))
    seen = seen_datasets(bindings, read_events(Path(args.events)))
    if args.output == "json":
        print(json.dumps(to_json(seen), indent=2))
    else:
        print(to_text(seen))
    return 0


def _demo(args: argparse.Namespace) -> int:
    from lineage_quality.demo import run_demo

    return run_demo(Path(args.output_dir) if args.output_dir else None)


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


def _alert_sender(args: argparse.Namespace, settings: Settings) -> AlertSender | None:
    from lineage_quality.producer.alert_outbox import AlertOutbox, outbox_path
    from lineage_quality.producer.alert_sender import AlertSender, Webhook
    from lineage_quality.producer.alerts import GENERIC, SLACK

    webhooks = [Webhook(u, GENERIC) for u in args.alert_webhook]
    webhooks += [Webhook(u, SLACK) for u in args.alert_slack_webhook]
    for hook in webhooks:
        if not hook.url.startswith(("http://", "https://")):
            raise ConfigError(f"alert webhook must be an http(s) URL: {hook.label}")
    if not webhooks:
        return None
    outbox = AlertOutbox(outbox_path(settings.spool), max_pending=settings.alert_max_pending)
    return AlertSender(outbox, webhooks)


def _default_spool() -> str:
    from lineage_quality.producer.settings import DEFAULTS

    return str(DEFAULTS.spool)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lineage-quality", description=__doc__)
    parser.add_argument("--version", action="version", version=__version__)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument(
        "--log-format",
        choices=["text", "json"],
        default="text",
        help="json: one JSON object per log line (time, level, logger, message)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

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
    _add_spark_conf_options(serve)
    _add_shacl_flags(serve)
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
    datahub.add_argument(
        "--datahub-gms",
        metavar="URL",
        help="send assertion MCPs to this GMS (token: DATAHUB_GMS_TOKEN)",
    )
    datahub.add_argument("--datahub-file", metavar="PATH", help="append assertion MCPs to a file")
    datahub.add_argument("--datahub-env", help="dataset URN env (default PROD)")
    datahub.add_argument("--datahub-platform-instance", help="dataset URN platform instance")
    groups["alerts"] = _add_alert_flags(serve)
    _add_settings_flags(serve, groups)  # once every group they go to exists
    add_history_flags(serve)
    serve.set_defaults(func=_serve)

    check = sub.add_parser("check", help="check a dataset against a contract, without lineage")
    check.add_argument(
        "--contract",
        required=True,
        metavar="FILE",
        help="ODCS .yaml, schema-rules .json, or SHACL .ttl",
    )
    check.add_argument("--dataset", required=True, metavar="LOCATION", help="path or URI")
    check.add_argument(
        "--format",
        choices=["parquet", "csv", "json", "orc", "delta", "avro"],
        help="storage format (default: the contract's server, else detected)",
    )
    check.add_argument("--output", choices=["table", "json"], default="table")
    check.add_argument(
        "--object", help="schema object / SHACL dataset to use when there are several"
    )
    _add_shacl_flags(check)
    check.add_argument(
        "--spark-master", help="the same as --spark-conf spark.master=... (default local[*])"
    )
    _add_spark_conf_options(check)
    check.set_defaults(func=_check)

    bindings = sub.add_parser(
        "bindings",
        help="which datasets of recorded events bind to which rules, and why others do not",
    )
    bindings.add_argument(
        "--contracts", action="append", required=True, metavar="PATH",
        help="contract file or folder (repeatable, as serve takes them)",
    )  # fmt: skip
    bindings.add_argument(
        "--events", required=True, metavar="FILE",
        help="OpenLineage events: JSON lines (the file transport's output) or a JSON array",
    )  # fmt: skip
    bindings.add_argument("--output", choices=["text", "json"], default="text")
    _add_shacl_flags(bindings)
    bindings.set_defaults(func=_bindings)
    add_history_parser(sub)

    demo = sub.add_parser("demo", help="run the bundled pipeline end to end (file sink)")
    demo.add_argument("--output-dir", help="default: demo-output/ in the checkout")
    demo.set_defaults(func=_demo)

    gate = sub.add_parser(
        "gate", help="exit 1 when a BLOCK rule of a run failed (for an orchestrator's next step)"
    )
    gate.add_argument("--run-id", required=True, help="the run's id, or its parent's")
    gate.add_argument("--job", metavar="NAMESPACE/NAME", help="only this job's verdicts")
    gate.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                      help="wait this long for the run's evaluation")  # fmt: skip
    gate.add_argument("--url", default="http://127.0.0.1:5055", help="the producer (serve)")
    gate.add_argument("--api-key-file", help="file with the API key (else LINEAGE_QUALITY_API_KEY)")
    gate.set_defaults(func=_gate)

    dead = sub.add_parser(
        "dead-letters",
        help="events a sink (--alerts: alerts a webhook) kept refusing: list, show, retry, purge",
    )
    dead.add_argument("action", choices=["list", "show", "retry", "purge"])
    dead.add_argument("ids", nargs="*", type=int, metavar="ID", help="dead letter ids")
    dead.add_argument("--spool", default=_default_spool(), help="serve's --spool")
    dead.add_argument("--alerts", action="store_true", help="alerts a webhook kept refusing")
    dead.set_defaults(func=_dead_letters)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(logging.DEBUG if args.verbose else logging.INFO, args.log_format)
    logging.getLogger("py4j").setLevel(logging.WARNING)
    try:
        return int(args.func(args))
    except LineageQualityError as exc:
        print(f"lineage-quality: error: {masked(str(exc))}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "pyspark":
            raise
        from lineage_quality.evaluation.spark_line import pyspark_version

        try:
            pyspark_version()  # its ConfigError says what to install
        except ConfigError as missing:
            print(f"lineage-quality: error: {missing}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())

"""`lineage-quality serve | check | demo`."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lineage_quality.errors import ConfigError, LineageQualityError
from lineage_quality.version import __version__

if TYPE_CHECKING:
    from lineage_quality.contracts import BoundRules
    from lineage_quality.contracts.shacl import ShaclOptions
    from lineage_quality.engine.quarantine import QuarantineConfig
    from lineage_quality.producer.result_sinks import ResultSink


def _serve(args: argparse.Namespace) -> int:
    from lineage_quality.contracts import load_contracts
    from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
    from lineage_quality.producer.secrets import (
        environment_secrets,
        redact_logs,
        transport_secrets,
    )

    redact = redact_logs(environment_secrets(os.environ))
    # openlineage-python logs its transport config (custom headers too) at debug level
    logging.getLogger("openlineage.client.transport").setLevel(logging.INFO)
    if args.openlineage_config:
        os.environ["OPENLINEAGE_CONFIG"] = args.openlineage_config
    bindings = load_contracts(args.contracts, shacl=_shacl_options(args))
    result_sinks = _datahub_sinks(args, bindings)  # fails here when misconfigured
    api_key = os.environ.get("LINEAGE_QUALITY_API_KEY") or None
    forwarder = Forwarder()
    redact.add(transport_secrets(forwarder.transport))
    producer = Producer(
        Evaluator(bindings, master=args.spark_master, quarantine=_quarantine(args)),
        forwarder,
        Spool(
            args.spool,
            max_events=args.spool_max_events or None,
            max_bytes=args.spool_max_bytes or None,
        ),
        host=args.host,
        port=args.port,
        api_key=api_key,
        max_body=args.max_body_bytes,
        result_sinks=result_sinks,
        workers=args.workers,
        evaluation_timeout=args.evaluation_timeout or None,
        cancel_after=args.evaluation_cancel_after or None,
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
    producer.stop(drain_timeout=args.drain_seconds)
    return 0


def _quarantine(args: argparse.Namespace) -> QuarantineConfig | None:
    from lineage_quality.engine.quarantine import QuarantineConfig

    if args.quarantine_max_rows < 1:
        raise ConfigError(
            f"--quarantine-max-rows must be at least 1, not {args.quarantine_max_rows}"
        )
    if not args.quarantine:
        return None
    return QuarantineConfig(args.quarantine, args.quarantine_max_rows)


def _datahub_sinks(args: argparse.Namespace, bindings: Sequence[BoundRules]) -> list[ResultSink]:
    """DataHub assertion sinks from `--datahub-*` (token from DATAHUB_GMS_TOKEN)."""
    from lineage_quality.datahub.config import DataHubConfig, build_sink

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
    )


def _demo(args: argparse.Namespace) -> int:
    from lineage_quality.demo import run_demo

    return run_demo(Path(args.output_dir) if args.output_dir else None)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lineage-quality", description=__doc__)
    parser.add_argument("--version", action="version", version=__version__)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="receive OpenLineage events, add quality facets, forward")
    serve.add_argument(
        "--contracts",
        action="append",
        required=True,
        metavar="PATH",
        help="contract file or folder (repeatable)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=5055)
    serve.add_argument(
        "--spool", default=".lineage-quality/spool.db", help="durable event spool (SQLite)"
    )
    serve.add_argument(
        "--openlineage-config",
        metavar="FILE",
        help="openlineage.yml saying where to forward (else the usual lookup)",
    )
    serve.add_argument("--spark-master", help="Spark master for evaluation (default local[*])")
    _add_shacl_flags(serve)
    serve.add_argument("--max-body-bytes", type=int, default=16 * 1024 * 1024)
    serve.add_argument(
        "--drain-seconds",
        type=float,
        default=30.0,
        help="on shutdown, wait this long for queued events to be forwarded",
    )
    reliability = serve.add_argument_group("reliability", "docs/reliability.md")
    reliability.add_argument(
        "--spool-max-events",
        type=int,
        default=100_000,
        metavar="N",
        help="answer 503 past N queued events (default 100000; 0: no bound)",
    )
    reliability.add_argument(
        "--spool-max-bytes",
        type=int,
        default=1024**3,
        metavar="BYTES",
        help="answer 503 past this many queued bytes (default 1 GiB; 0: no bound)",
    )
    reliability.add_argument(
        "--workers", type=int, default=4, help="events handled at once, one per run (default 4)"
    )
    reliability.add_argument(
        "--evaluation-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="hold a COMPLETE event at most this long for its evaluation, then forward it with "
        "the rules still running as ERROR; their results follow in an OTHER event "
        "(default 300; 0: wait as long as it takes)",
    )
    reliability.add_argument(
        "--evaluation-cancel-after",
        type=float,
        default=3600.0,
        metavar="SECONDS",
        help="cancel the Spark jobs of an evaluation still running after this long "
        "(default 3600; 0: never)",
    )
    quarantine = serve.add_argument_group("quarantine", "docs/quarantine.md")
    quarantine.add_argument(
        "--quarantine",
        metavar="PATH",
        help="write the failing rows of failed QUARANTINE rules here (Parquet, by run id)",
    )
    quarantine.add_argument(
        "--quarantine-max-rows",
        type=int,
        default=1000,
        metavar="N",
        help="at most N rows per rule (default 1000)",
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
    check.add_argument("--spark-master", help="default local[*]")
    check.set_defaults(func=_check)

    demo = sub.add_parser("demo", help="run the bundled pipeline end to end (file sink)")
    demo.add_argument("--output-dir", help="default: demo-output/ in the checkout")
    demo.set_defaults(func=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("py4j").setLevel(logging.WARNING)
    try:
        return int(args.func(args))
    except LineageQualityError as exc:
        print(f"lineage-quality: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

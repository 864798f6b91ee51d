"""`lineage-quality datahub publish --contracts DIR`: the contracts' assertions and data contracts
sent to DataHub (a GMS or an MCP file) before any run (datahub/publish.py). Imports neither
pyspark nor, until it runs, the SDK."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from lineage_quality.cli.datahub_options import add_datahub_options
from lineage_quality.cli.options import add_shacl_flags, shacl_options
from lineage_quality.errors import ConfigError


def add_parser(sub: Any) -> None:
    """The `datahub` command and its `publish` subcommand."""
    datahub = sub.add_parser("datahub", help="DataHub: publish assertions and data contracts")
    commands = datahub.add_subparsers(dest="datahub_command", required=True)
    publish = commands.add_parser(
        "publish", help="send the contracts' assertions and data contracts, before any run"
    )
    publish.add_argument(
        "--contracts",
        action="append",
        required=True,
        metavar="PATH",
        help="contract file or folder (repeatable)",
    )
    add_datahub_options(publish)
    publish.add_argument(
        "--marquez-web-url", metavar="URL", help="assertions link to the dataset in this UI"
    )
    add_shacl_flags(publish)
    publish.set_defaults(func=run_publish)


def run_publish(args: argparse.Namespace) -> int:
    from lineage_quality.contracts import load_contracts
    from lineage_quality.datahub.config import DataHubConfig, require_sdk

    if not (args.datahub_gms or args.datahub_file):
        raise ConfigError(
            "datahub publish needs --datahub-server (--datahub-gms) or --datahub-file"
        )
    config = DataHubConfig.from_options(
        gms_url=args.datahub_gms,
        file=args.datahub_file,
        env=args.datahub_env,
        platform_instance=args.datahub_platform_instance,
        instance=args.datahub_instance,
        incidents=args.datahub_incidents,
        marquez_web_url=args.marquez_web_url,
        state=args.datahub_state,
    )
    require_sdk()
    from lineage_quality.datahub.publish import publish_mcps
    from lineage_quality.datahub.sink import writers_of

    bindings = load_contracts(args.contracts, shacl=shacl_options(args))
    done = publish_mcps(bindings, config)
    for line in done.skipped:
        print(f"lineage-quality: warning: skipped {line}", file=sys.stderr)
    failed = 0
    for writer in writers_of(config):
        try:
            writer.write(done.mcps)
        except Exception as exc:
            failed += 1
            print(f"lineage-quality: error: {type(writer).__name__}: {exc}", file=sys.stderr)
        finally:
            writer.close()
    print(
        f"published {done.assertions} assertions in {done.contracts} data contracts "
        f"({len(done.mcps)} MCPs)"
    )
    return 1 if failed else 0

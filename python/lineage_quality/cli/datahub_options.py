"""The DataHub options `serve` and `check` share (`--datahub-gms`/`--datahub-server`,
`--datahub-file`, naming, the assertions' platform instance, incidents, state), and the outputs
they ask for (`datahub-rest`, `datahub-file`: producer/outputs/, built by the one factory).
Imports neither pyspark nor the SDK."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lineage_quality.errors import ConfigError

if TYPE_CHECKING:
    from lineage_quality.producer.settings import OutputSpec


def add_datahub_options(group: Any) -> None:
    """The `--datahub-*` options, on a parser or an argument group."""
    group.add_argument(
        "--datahub-gms",
        "--datahub-server",
        dest="datahub_gms",
        metavar="URL",
        help="send assertion MCPs to this GMS (token: DATAHUB_GMS_TOKEN)",
    )
    group.add_argument("--datahub-file", metavar="PATH", help="append assertion MCPs to a file")
    group.add_argument("--datahub-env", help="dataset URN env (default PROD)")
    group.add_argument("--datahub-platform-instance", help="dataset URN platform instance")
    group.add_argument(
        "--datahub-instance",
        metavar="NAME",
        help="platform instance of the assertions (lineage-quality's dataPlatformInstance)",
    )
    group.add_argument(
        "--datahub-incidents",
        metavar="ACTIONS",
        help="rule actions whose failures raise a DataHub incident (an incident entity, ACTIVE; "
        "resolved by the next pass), comma list (default BLOCK; none: no incidents)",
    )
    group.add_argument(
        "--datahub-state",
        metavar="PATH",
        help="JSON file remembering each rule's assertion, so a superseded one is marked removed "
        "across restarts",
    )


def datahub_specs(
    args: argparse.Namespace,
    state: str | Path | None = None,
    marquez_web_url: str | None = None,
) -> list[OutputSpec]:
    """The `datahub-rest` / `datahub-file` outputs the options ask for (`state`: the default of
    `--datahub-state`)."""
    from lineage_quality.producer.settings import OutputSpec

    extra = {
        "env": args.datahub_env,
        "platform_instance": args.datahub_platform_instance,
        "instance": args.datahub_instance,
        "incidents": args.datahub_incidents,
    }
    extra = {k: v for k, v in extra.items() if v}
    if (extra or args.datahub_state) and not (args.datahub_gms or args.datahub_file):
        raise ConfigError(
            "--datahub-env/--datahub-platform-instance/--datahub-instance/--datahub-incidents/"
            "--datahub-state need --datahub-gms or --datahub-file"
        )
    chosen = args.datahub_state or state
    if chosen:
        extra["state"] = str(chosen)
    if marquez_web_url:
        extra["marquez_web_url"] = marquez_web_url
    specs = []
    if args.datahub_gms:
        specs.append(OutputSpec("datahub-rest", {"url": args.datahub_gms, **extra}))
    if args.datahub_file:
        # two writers, one state file: each would supersede for the other; the file's own
        file_extra = dict(extra)
        if args.datahub_gms and chosen:
            file_extra["state"] = f"{chosen}.file"
        specs.append(OutputSpec("datahub-file", {"path": args.datahub_file, **file_extra}))
    return specs

"""Options more than one command takes: the evaluator's Spark settings and SHACL's."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from lineage_quality.errors import ConfigError

# The storage formats `check` and `schema` read a location as (`--format`)
STORAGE_FORMATS = ("parquet", "csv", "json", "orc", "delta", "avro")

if TYPE_CHECKING:
    from lineage_quality.contracts.shacl import ShaclOptions


def spark_conf(args: argparse.Namespace) -> dict[str, str]:
    from lineage_quality.evaluation.spark_conf import evaluator_conf

    return evaluator_conf(args.properties_file, args.spark_conf or [])


def add_spark_conf_options(parser: argparse.ArgumentParser) -> None:
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


def shacl_options(args: argparse.Namespace) -> ShaclOptions:
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


def add_shacl_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--shacl-assertions",
        action="store_true",
        help="turn SHACL constraints into rules (off by default, as SHACL-to-DataHub has it)",
    )
    parser.add_argument(
        "--shacl-assertion-types",
        metavar="LIST",
        help="comma list of required_fields,field_size,value_checks (default all)",
    )

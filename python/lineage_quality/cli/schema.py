"""`lineage-quality schema DATA_SOURCE --rules FILE`: seed 002's command, as it names it.

`check` by another name: the rules file (the schema-rules JSON format, its field items and its
rule-model objects; docs/rules.md) is decomposed into atomic rules and evaluated on the data
source, with the seed's skip semantics, outputs (`--output table|json`) and exit codes: 0 every
rule passed, 1 a rule failed (or could not run), 2 the rules file or the command is bad."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lineage_quality.cli.check import run_check
from lineage_quality.cli.options import STORAGE_FORMATS, add_spark_conf_options, spark_conf
from lineage_quality.contracts.shacl import ShaclOptions
from lineage_quality.errors import ContractError


def add_parser(sub: Any) -> None:
    """The `schema` command."""
    schema = sub.add_parser(
        "schema",
        help="check a data source against a schema-rules JSON file (same as check)",
    )
    schema.add_argument("data_source", metavar="DATA_SOURCE", help="path or URI of the data")
    schema.add_argument("--rules", required=True, metavar="FILE", help="schema-rules .json file")
    schema.add_argument(
        "--format",
        choices=STORAGE_FORMATS,
        help="storage format (default: detected)",
    )
    schema.add_argument("--output", choices=["table", "json"], default="table")
    schema.add_argument(
        "--spark-master", help="the same as --spark-conf spark.master=... (default local[*])"
    )
    add_spark_conf_options(schema)
    schema.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rules = Path(args.rules)
    if rules.suffix.lower() != ".json":
        raise ContractError(
            str(rules),
            "--rules takes a schema-rules .json file (check reads the other contract formats)",
        )
    return run_check(
        rules,
        args.data_source,
        args.format,
        args.output,
        None,
        ShaclOptions(),
        args.spark_master,
        spark_conf=spark_conf(args),
    )

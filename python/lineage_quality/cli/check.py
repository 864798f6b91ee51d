"""`lineage-quality check`: the same engine on a dataset without any lineage.

With `--history PATH|URL` (a SQLite file or a PostgreSQL URL, as `serve`'s) the check keeps its
measured values and judges its history rules on them, as `serve` does: the run is this
invocation (a new run id, the time it finished), the dataset is named as in the facets
(`file:/lake/orders`), so a daily orchestrated check and a `serve` sharing the store read one
series. Without it, history rules are SKIPPED (never a pass)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import attrs

from lineage_quality.cli.datahub_options import add_datahub_options, datahub_specs
from lineage_quality.cli.history import PASSWORD_FILE_HELP, add_minimum_flags, minimums_of
from lineage_quality.cli.options import (
    STORAGE_FORMATS,
    add_shacl_flags,
    add_spark_conf_options,
    shacl_options,
    spark_conf,
)
from lineage_quality.cli.terminal import terminal_of
from lineage_quality.contracts import BoundRules, load_file
from lineage_quality.contracts.shacl import ShaclOptions
from lineage_quality.errors import ContractError, SparkStartError
from lineage_quality.evaluation.jvm_output import JvmOutput
from lineage_quality.history.judge import NOT_IN_CHECK, judge_and_record, without_history
from lineage_quality.history.store import HistoryStore, open_history
from lineage_quality.masked_values import masked_results
from lineage_quality.producer.result_sinks import ResultSink, close_sinks, emit_results
from lineage_quality.report import to_json, to_table
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules.history import DEFAULT_MINIMUMS, HistoryMinimums
from lineage_quality.samples import DEFAULT_ROWS, sampling_of
from lineage_quality.values.refs import DatasetRef
from lineage_quality.version import __version__

if TYPE_CHECKING:
    from lineage_quality.producer.settings import OutputSpec

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def select(
    bindings: Sequence[BoundRules], namespace: str, name: str, wanted: str | None, source: str
) -> BoundRules:
    """The schema object to check: --object, else the only one, else the one bound to the data."""
    if wanted is not None:
        for b in bindings:
            if b.object_name == wanted:
                return b
        names = ", ".join(b.object_name for b in bindings)
        raise ContractError(source, f"no object {wanted!r} in the contract (has: {names})")
    if len(bindings) == 1:
        return bindings[0]
    matching = [b for b in bindings if b.matches(namespace, name)]
    if len(matching) == 1:
        return matching[0]
    names = ", ".join(b.object_name for b in bindings) or "none"
    raise ContractError(source, f"the contract describes several datasets ({names}): use --object")


class Progress:
    """A one-line status on a terminal while Spark works (nothing when not a terminal)."""

    def __init__(self, spark: Any, label: str, stream: TextIO) -> None:
        self.spark = spark
        self.label = label
        self.stream = stream
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Progress:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.stream.write("\r\x1b[2K")
        self.stream.flush()

    def _run(self) -> None:
        tracker = self.spark.sparkContext.statusTracker()
        frames = "|/-\\"
        tick = 0
        while not self._stop.wait(0.2):
            done = total = 0
            for stage_id in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage_id)
                if info is not None:
                    done += info.numCompletedTasks
                    total += info.numTasks
            tasks = f" tasks {done}/{total}" if total else ""
            self.stream.write(f"\r\x1b[2K{frames[tick % 4]} {self.label}{tasks}")
            self.stream.flush()
            tick += 1


def run_check(
    contract: Path,
    dataset: str,
    fmt: str | None,
    output: str,
    obj: str | None,
    shacl: ShaclOptions,
    master: str | None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    spark_conf: Mapping[str, str] | None = None,
    history: str | None = None,
    history_password_file: str | None = None,
    column: str | None = None,
    outputs: Sequence[OutputSpec] = (),
    history_minimums: HistoryMinimums = DEFAULT_MINIMUMS,
) -> int:
    """`outputs`: where the results also go (`datahub-rest`, `datahub-file`: built by the
    outputs factory, sent before the exit code is returned). `history_minimums`: the minimum
    history of the stddev and seasonal rules that declare none."""
    out = out or sys.stdout
    err = err or sys.stderr
    from lineage_quality.evaluation.datasets import dataset_identity

    # check names the dataset: NodeShapes linked to no dataset can check it
    bindings = load_file(contract, attrs.evolve(shacl, standalone_shapes=True), column)
    namespace, name = dataset_identity(dataset)
    chosen = select(bindings, namespace, name, obj, str(contract))
    sinks = _result_sinks(outputs, chosen)  # a wrong output fails before Spark starts
    if not chosen.rules:
        hint = (
            " (SHACL assertions are off: pass --shacl-assertions)"
            if contract.suffix == ".ttl"
            else ""
        )
        err.write(f"lineage-quality: warning: {contract} declares no rules{hint}\n")
    # opened before Spark: a bad store fails fast, and libpq has read PGPASSWORD before the
    # JVM (which runs contract SQL) starts without it and every other secret, as in serve
    store = None if history is None else open_history(history, password_file=history_password_file)
    from lineage_quality.producer.secrets import scrub_environment

    scrub_environment(os.environ)
    try:
        return _evaluate(
            contract, dataset, fmt, output, chosen, master, out, err, spark_conf, store, sinks,
            history_minimums,
        )  # fmt: skip
    finally:
        if store is not None:
            store.close()


def _evaluate(
    contract: Path,
    dataset: str,
    fmt: str | None,
    output: str,
    chosen: BoundRules,
    master: str | None,
    out: TextIO,
    err: TextIO,
    spark_conf: Mapping[str, str] | None,
    store: HistoryStore | None,
    sinks: Sequence[ResultSink],
    minimums: HistoryMinimums,
) -> int:
    from lineage_quality.engine.run import evaluate_dataframe
    from lineage_quality.evaluation.datasets import dataset_identity, read_location
    from lineage_quality.evaluation.session import evaluator_session

    jvm = JvmOutput()
    try:
        with jvm.starting():
            spark = evaluator_session(master, spark_conf)
    except SparkStartError as exc:
        reason = jvm.reason()  # the JVM's own words beat PySpark's "gateway exited"
        if reason is None:
            raise
        raise SparkStartError(exc.args[0], reason) from exc
    jvm.started()
    spark.sparkContext.setLogLevel("ERROR")
    df = read_location(spark, dataset, fmt or chosen.format)
    label = f"checking {len(chosen.rules)} rules on {dataset}"
    results: list[RuleResult]
    # failing-row samples, masked with the key kept beside the history store (else this run's)
    sampling = attrs.evolve(
        sampling_of(DEFAULT_ROWS, False, None, store.where if store is not None else None),
        policy=chosen.samples,
    )
    if err.isatty():
        with Progress(spark, label, terminal_of(err)):
            results = evaluate_dataframe(df, list(chosen.rules), sampling=sampling)
    else:
        results = evaluate_dataframe(df, list(chosen.rules), sampling=sampling)
    namespace, name = dataset_identity(dataset)
    if store is None:
        results = without_history(results, Status.SKIPPED, NOT_IN_CHECK)
    else:
        run_id = str(uuid.uuid4())
        results = judge_and_record(
            store, f"{namespace}:{name}", run_id, int(time.time() * 1000), results,
            minimums=minimums, masking=sampling,
        )  # fmt: skip
    # judged (and kept) raw; shown masked where a masked column's row value would show
    results = masked_results(results, sampling)
    _publish(sinks, namespace, name, results, err)
    if output == "json":
        out.write(json.dumps(to_json(dataset, results), indent=2) + "\n")
    else:
        out.write(to_table(dataset, results) + "\n")
    failed = any(r.status in (Status.FAILED, Status.ERROR) for r in results)
    return EXIT_FAILED if failed else EXIT_OK


def _result_sinks(outputs: Sequence[OutputSpec], chosen: BoundRules) -> Sequence[ResultSink]:
    if not outputs:
        return ()
    from lineage_quality.producer.outputs.factory import build_outputs
    from lineage_quality.producer.settings import Settings

    return build_outputs(Settings.of(outputs=tuple(outputs)), [chosen]).result_sinks


def check_event(namespace: str, name: str) -> dict[str, Any]:
    """The OpenLineage event `check` reports under: a run of job `lineage-quality/check` that
    read the dataset (its results are the dataset's, as any run's)."""
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return {
        "eventType": "COMPLETE",
        "eventTime": now,
        "producer": f"https://github.com/lineage-quality/lineage-quality/tree/{__version__}",
        "run": {"runId": str(uuid.uuid4())},
        "job": {"namespace": "lineage-quality", "name": "check"},
        "inputs": [{"namespace": namespace, "name": name}],
        "outputs": [],
    }


def _publish(
    sinks: Sequence[ResultSink],
    namespace: str,
    name: str,
    results: list[RuleResult],
    err: TextIO,
) -> None:
    """Hand the results to each sink and wait for them; a destination that failed is a warning
    (the verdict, and so the exit code, stays the data's)."""
    if not sinks:
        return
    event = check_event(namespace, name)
    ref = DatasetRef("inputs", 0, namespace, name)
    emit_results(sinks, event, {ref: results})
    close_sinks(sinks)
    for sink in sinks:
        failed = int(getattr(sink, "failed", 0)) + int(getattr(sink, "dropped", 0))
        if failed:
            label = type(sink).__name__
            err.write(f"lineage-quality: warning: {label}: {failed} batch(es) not sent\n")


def add_parser(sub: Any) -> None:
    """The `check` command."""
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
        choices=STORAGE_FORMATS,
        help="storage format (default: the contract's server, else detected)",
    )
    check.add_argument("--output", choices=["table", "json"], default="table")
    check.add_argument(
        "--object", help="schema object / SHACL dataset to use when there are several"
    )
    check.add_argument(
        "--column",
        metavar="NAME",
        help="the column a bare `quality:` fragment of an ODCS property belongs to (the "
        "predefined-rules RFC shows a property's rules without their property)",
    )
    add_shacl_flags(check)
    check.add_argument(
        "--spark-master", help="the same as --spark-conf spark.master=... (default local[*])"
    )
    add_spark_conf_options(check)
    check.add_argument(
        "--history",
        metavar="PATH|URL",
        help="keep this check's measured values and judge its history rules, as serve does: a "
        "SQLite file or a postgresql:// URL (docs/history.md); without it history rules are "
        "SKIPPED",
    )
    check.add_argument("--history-password-file", metavar="FILE", help=PASSWORD_FILE_HELP)
    add_minimum_flags(check)
    datahub = check.add_argument_group(
        "DataHub assertions", "needs pip install 'lineage-quality[datahub]'; docs/datahub.md"
    )
    add_datahub_options(datahub)
    datahub.add_argument(
        "--marquez-web-url", metavar="URL", help="results link to the dataset in this Marquez UI"
    )
    check.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return run_check(
        Path(args.contract),
        args.dataset,
        args.format,
        args.output,
        args.object,
        shacl_options(args),
        args.spark_master,
        spark_conf=spark_conf(args),
        history=args.history,
        history_password_file=args.history_password_file,
        column=args.column,
        outputs=datahub_specs(args, marquez_web_url=args.marquez_web_url),
        history_minimums=minimums_of(args),
    )

"""`attach(builder, contracts=...)` and `verify()`: lineage-quality inside the job's driver.

    spark = lineage_quality.attach(SparkSession.builder, contracts="contracts/").getOrCreate()

`attach` starts the in-driver producer (see `runtime`) and configures the builder: the real
OpenLineage listener (`spark.extraListeners`, its jar) with its HTTP transport pointed at the
producer. The end of the job is gated on the BLOCK rules:

- `verify()`: wait (at most `wait_seconds`) for the events posted so far to be evaluated and
  forwarded; raise QualityGateFailed if a BLOCK rule failed or could not be evaluated;
- `SparkSession.stop()`: the same, then the real stop, then forward the application's last
  events; raises QualityGateFailed after the session is stopped;
- interpreter exit without either: the same from an `atexit` hook; a failed gate prints the
  reasons on stderr and ends the process with exit status 1, so `spark-submit` fails.

Pyspark is imported only when `attach` runs: `import lineage_quality` stays Spark-free.
"""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lineage_quality.driver.gate import gate_message
from lineage_quality.errors import ConfigError, QualityGateFailed
from lineage_quality.evaluation.spark_line import JarLineMismatch, check_jar, running_line

if TYPE_CHECKING:
    from openlineage.client.transport import Transport
    from pyspark.sql import SparkSession

    from lineage_quality.driver.runtime import DriverProducer
    from lineage_quality.driver.streaming import StreamWatch
    from lineage_quality.driver.upstream_guard import UpstreamGuard
    from lineage_quality.history.store import HistoryBounds
    from lineage_quality.lineage.keeper import LineageKeeper
    from lineage_quality.lineage.policy import Upstream
    from lineage_quality.producer.settings import OutputSpec

log = logging.getLogger(__name__)

LISTENER_CLASS = "io.openlineage.spark.agent.OpenLineageSparkListener"
ENGINE_PROBE_CLASS = "lineagequality.ColumnProgram"  # any class of the engine jar
DEFAULT_WAIT_SECONDS = 600.0
DEFAULT_HOLD_SECONDS = 60.0
DEFAULT_UPSTREAM_REFRESH_SECONDS = 2.0
_LISTENER_BUS_WAIT_MS = 60_000


class _Attached:
    """The one attachment of this process."""

    def __init__(
        self,
        producer: DriverProducer,
        spool_path: Path,
        wait_seconds: float,
        own_spool: bool,
        guard: UpstreamGuard | None = None,
        watch: StreamWatch | None = None,
    ) -> None:
        self.producer = producer
        self.watch = watch  # streaming queries' micro-batches (driver/streaming.py)
        self.guard = guard  # upstream="block": the health file the engine's check rule reads
        self.spool_path = spool_path
        self.wait_seconds = wait_seconds
        self.own_spool = own_spool  # the per-process default: removed when left empty
        self.finished = False
        self.lock = threading.RLock()

    def settle(self) -> list[str]:
        """Wait for the events posted so far to be evaluated and forwarded; the gate's failures
        (one line each; a timeout is one too: it is never a pass)."""
        _drain_listener_bus()
        if self.watch is not None:
            self.watch.flush(self.wait_seconds)
        self.producer.release_held()
        problems = []
        if not self.producer.spool.wait_empty(self.wait_seconds):
            pending = self.producer.spool.pending()
            problems.append(
                f"{pending} lineage event(s) not evaluated and forwarded within "
                f"{self.wait_seconds:g}s; they stay in the spool {self.spool_path}"
            )
        if self.guard is not None:  # what this job's own writes did is refused from now on
            self.guard.refresh()
        # One line per failure: a dataset written by one run and read by the next fails twice.
        return problems + list(dict.fromkeys(b.describe() for b in self.producer.blocking()))

    def finish(self, stop_spark: Callable[[], None]) -> list[str]:
        """Gate, stop Spark, forward its last events, stop the producer. Once."""
        with self.lock:
            if self.finished:
                return []
            self.finished = True
            try:
                problems = self.settle()
            finally:
                try:
                    stop_spark()
                finally:
                    self.producer.release_held()
                    if self.guard is not None:
                        self.guard.stop()
                    self.producer.stop(drain_timeout=self.wait_seconds)
                    self._remove_empty_spool()
            return problems

    def _remove_empty_spool(self) -> None:
        spool = self.producer.spool
        if not self.own_spool:
            return
        alerts = self.producer.alerts
        if alerts is not None and not alerts.outbox.pending():
            alerts.outbox.close()
            for path in alerts.outbox.path.parent.glob(alerts.outbox.path.name + "*"):
                path.unlink(missing_ok=True)
        if spool.pending():
            return  # events not forwarded yet stay for the next attach with this spool
        spool.close()
        for path in self.spool_path.parent.glob(self.spool_path.name + "*"):
            path.unlink(missing_ok=True)


_attached: _Attached | None = None
_original_stop: Callable[[SparkSession], None] | None = None


def _drain_listener_bus() -> None:
    """Let Spark's listener bus deliver what it queued (the listener posts from there)."""
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    if sc is None:
        return
    try:
        sc._jsc.sc().listenerBus().waitUntilEmpty(_LISTENER_BUS_WAIT_MS)
    except Exception as exc:  # a stopped context, or a Spark without the method
        log.debug("could not wait for Spark's listener bus: %s", exc)


def _add_jar_to_running_jvm(jar: Path, class_name: str = LISTENER_CLASS) -> None:
    """Under spark-submit the driver JVM is running before this code: `spark.jars` set now does
    not reach its class path (it still reaches the executors), so the listener class could not
    load. Put the jar on the class loader spark-submit made for the application (a
    MutableURLClassLoader)."""
    from pyspark import SparkContext

    SparkContext._ensure_initialized()
    jvm = SparkContext._jvm
    assert jvm is not None
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    try:
        jvm.java.lang.Class.forName(class_name, False, loader)
        return  # already there (--jars, --packages, spark-defaults)
    except Exception:
        pass
    try:
        loader.addURL(jvm.java.io.File(str(jar)).toURI().toURL())
    except Exception as exc:
        raise ConfigError(
            f"cannot load {class_name} from {jar} into the running driver JVM "
            f"({exc}); pass it to spark-submit with --jars {jar}"
        ) from exc


def _find_jar(jar: str | Path | None) -> Path:
    if jar is not None:
        path = Path(jar)
        if not path.is_file():
            raise ConfigError(f"attach(jar=...): no such file {path}")
        check_jar(path)
        return path.resolve()
    from lineage_quality.sparksubmit import listener_jar

    for root in (Path.cwd(), Path(__file__).resolve().parents[3]):
        try:
            return listener_jar(root).resolve()
        except JarLineMismatch:
            raise  # a jar of the other Spark line: say so, don't look further
        except ConfigError:
            continue
    line = running_line()
    raise ConfigError(
        f"OpenLineage listener jar not found in jvm-config/{line.jars} (run "
        f"`make jars SPARK={line.name}`); pass attach(..., "
        f"jar='path/to/openlineage-spark_{line.scala}-<version>.jar')"
    )


def _transport(transport: Transport | Mapping[str, Any] | None) -> Transport | None:
    if transport is None or not isinstance(transport, Mapping):
        return transport
    from lineage_quality.producer.forward import transport_factory

    return transport_factory().create(dict(transport))


def _appended(builder: Any, key: str, value: str) -> str:
    # Keep what the job already set (other jars, other listeners).
    existing = [v for v in str(builder._options.get(key, "")).split(",") if v.strip()]
    return ",".join(existing if value in existing else [*existing, value])


def _patched_stop(session: SparkSession) -> None:
    attached = _attached
    assert _original_stop is not None
    if attached is None or attached.finished:
        _original_stop(session)
        return
    original = _original_stop
    problems = attached.finish(lambda: original(session))
    if problems:
        _report(gate_message(problems))
        raise QualityGateFailed(gate_message(problems), problems)


def _report(message: str) -> None:
    """The gate's message on stderr. Under spark-submit the Python process's stderr is merged
    into spark-submit's stdout, so it also goes to the driver JVM's stderr."""
    print(message, file=sys.stderr, flush=True)
    if not os.environ.get("PYSPARK_GATEWAY_PORT"):
        return
    try:
        from pyspark import SparkContext

        jvm = SparkContext._jvm
        if jvm is not None:
            jvm.java.lang.System.err.println(message)
            jvm.java.lang.System.err.flush()
    except Exception:  # the gateway is gone: the Python stderr line is all there is
        pass


def _at_exit() -> None:
    attached = _attached
    if attached is None or attached.finished:
        return

    def stop_spark() -> None:
        from pyspark import SparkContext

        sc = SparkContext._active_spark_context
        if sc is not None:
            sc.stop()

    problems = attached.finish(stop_spark)
    if problems:
        _report(gate_message(problems))
        sys.stdout.flush()
        os._exit(1)  # an atexit hook cannot change the exit status otherwise


def attach(
    builder: SparkSession.Builder,
    contracts: str | Path | Sequence[str | Path],
    *,
    transport: Transport | Mapping[str, Any] | None = None,
    jar: str | Path | None = None,
    spool: str | Path | None = None,
    namespace: str | None = None,
    quarantine: str | None = None,
    quarantine_max_rows: int | None = None,
    wait_seconds: float = DEFAULT_WAIT_SECONDS,
    hold_seconds: float = DEFAULT_HOLD_SECONDS,
    history: str | None = None,
    history_bounds: HistoryBounds | None = None,
    history_password_file: str | Path | None = None,
    history_min_stddev: int | None = None,
    history_min_seasonal: int | None = None,
    reuse_max_versions: int | None = None,
    reuse_days: float | None = None,
    outputs: Sequence[OutputSpec | Mapping[str, Any]] = (),
    alert_min_severity: str = "info",
    marquez_web_url: str | None = None,
    upstream: str = "warn",
    upstream_refresh_seconds: float = DEFAULT_UPSTREAM_REFRESH_SECONDS,
    sample_rows: int | None = None,
    facet_samples: bool = False,
) -> SparkSession.Builder:
    """Configure `builder` for in-driver quality checks and return it (call `.getOrCreate()`).

    `contracts`: contract files or folders. `transport`: where enriched events go, an
    openlineage-python Transport or its config dict (default: the usual OpenLineage config,
    openlineage.yml / OPENLINEAGE__TRANSPORT__* / OPENLINEAGE_URL). `jar`: the
    openlineage-spark jar (default: jvm-config/jars). `spool`: the durable event spool (default
    .lineage-quality/driver-<pid>.db). `namespace`: the listener's job namespace.
    `quarantine`, `quarantine_max_rows`: where failing rows of QUARANTINE rules go, and how many
    per rule (default: serve's, Settings.quarantine_max_rows). `sample_rows`, `facet_samples`:
    as serve's `--sample-rows` and `--facet-samples` (failing-row samples, docs/rules.md).
    `wait_seconds`: how long the end of the job waits for pending evaluations.
    `history`: where measured values are kept for history rules (a SQLite path or a
    postgresql:// URL shared with serve; default history.db beside the spool; "off": none);
    `history_bounds`, `history_password_file`: as serve's `--history-max-*`,
    `--history-retention-days` and `--history-password-file`. `history_min_stddev`,
    `history_min_seasonal`: as serve's `--history-min-*` (the minimum history of a band).
    `reuse_max_versions`, `reuse_days`: as serve's `--reuse-*` (one evaluation per dataset
    version, kept in the history store; 0 versions: none reused).
    `outputs`: result sinks and alert senders, as `serve` makes them from its flags (docs/
    producer.md, "Outputs"): each an `OutputSpec` or its config as a dict, e.g.
    `{"type": "datahub-file", "path": "assertions.json"}`, `{"type": "webhook", "url": ...}`,
    `{"type": "slack", "url": ...}`, `{"type": "datahub-rest", "url": "http://gms:8080"}`.
    `alert_min_severity` (info, warn, error), `marquez_web_url`: as serve's `--alert-*` options.
    `upstream`: quality along lineage (docs/lineage.md), kept in the history store: "warn" (the
    default) marks the outputs derived from unhealthy data; "block" also fails, at analysis and
    before it writes anything, every query of this application that reads a dataset whose
    latest write failed a rule or was marked (the engine jar's check rule, `spark.sql.
    extensions`), and makes the marks BLOCK; "off" keeps no lineage. The unhealthy datasets
    are looked up again after each event this process keeps, on `verify()`, and every
    `upstream_refresh_seconds` (writes evaluated by other producers sharing the store).
    """
    global _attached, _original_stop
    if _attached is not None and not _attached.finished:
        raise ConfigError("lineage_quality.attach() was already called in this process")

    from pyspark.sql import SparkSession

    from lineage_quality.contracts import load_contracts
    from lineage_quality.driver.runtime import DriverEvaluator, DriverProducer
    from lineage_quality.driver.streaming import watch_streams
    from lineage_quality.driver.upstream_guard import EXTENSION_CLASS, FILE_KEY, UpstreamGuard
    from lineage_quality.engine.quarantine import QuarantineConfig
    from lineage_quality.evaluation.session import engine_jar
    from lineage_quality.history.store import open_history
    from lineage_quality.lineage.policy import Upstream, parse_upstream
    from lineage_quality.producer.alerts import parse_min_severity
    from lineage_quality.producer.forward import Forwarder
    from lineage_quality.producer.outputs.factory import build_outputs
    from lineage_quality.producer.settings import DEFAULTS, Settings
    from lineage_quality.producer.spool import Spool
    from lineage_quality.samples import sampling_of

    try:
        policy = parse_upstream(upstream)
    except ValueError as exc:
        raise ConfigError(f"attach: {exc}") from exc
    if upstream_refresh_seconds <= 0:
        raise ConfigError(
            f"attach: upstream_refresh_seconds must be > 0, not {upstream_refresh_seconds!r}"
        )
    if policy is Upstream.BLOCK and history == "off":
        raise ConfigError(
            'attach(upstream="block") needs the history store, where the health of datasets '
            'is kept: not history="off"'
        )
    paths = [contracts] if isinstance(contracts, str | Path) else list(contracts)
    bindings = load_contracts([Path(p) for p in paths])
    jar_path = _find_jar(jar)
    if quarantine_max_rows is None:
        quarantine_max_rows = Settings().evaluation.quarantine_max_rows
    quarantine_config = QuarantineConfig(quarantine, quarantine_max_rows) if quarantine else None
    forwarder = Forwarder(_transport(transport))
    spool_path = Path(spool) if spool else Path(".lineage-quality") / f"driver-{os.getpid()}.db"
    # Only this process's listener posts to it: a loopback port of its own and a random key.
    # The job itself waits for the evaluations at its end (`wait_seconds`), so no evaluation
    # deadline here; the Spark session is the job's, started by the job.
    api_key = secrets.token_urlsafe(24)
    try:
        own = Settings.of(
            port=0,
            api_key=api_key,
            workers=2,
            evaluation_timeout=None,
            cancel_after=None,
            warm_evaluator=False,
            spool=spool_path,  # the alert outbox goes beside it
            outputs=outputs,
            alert_min_rank=parse_min_severity(alert_min_severity),
            marquez_web_url=marquez_web_url,
            facet_samples=facet_samples,
            sample_rows=DEFAULTS.evaluation.sample_rows if sample_rows is None else sample_rows,
            history_min_stddev=(
                DEFAULTS.history.min_stddev if history_min_stddev is None else history_min_stddev
            ),
            history_min_seasonal=(
                DEFAULTS.history.min_seasonal
                if history_min_seasonal is None
                else history_min_seasonal
            ),
            reuse_max_versions=(
                DEFAULTS.history.reuse_max_versions
                if reuse_max_versions is None
                else reuse_max_versions
            ),
            reuse_days=DEFAULTS.history.reuse_days if reuse_days is None else reuse_days,
        )
    except ValueError as exc:  # an output that is not a dict with a type, a severity
        raise ConfigError(f"attach: {exc}") from exc

    def first_event() -> None:
        # Registered now, after pyspark's own exit hook (which may kill the JVM it launched):
        # hooks run last-in first-out, so ours runs while Spark is still up.
        atexit.register(_at_exit)

    where = history or str(spool_path.parent / "history.db")
    store = (
        None
        if where == "off"
        else open_history(where, history_bounds, password_file=history_password_file)
    )
    helpers = engine_jar()
    if policy is Upstream.BLOCK and helpers is None:
        raise ConfigError(
            'attach(upstream="block") needs the engine jar (its check rule refuses the reads): '
            "run `make jars`"
        )
    lineage = _lineage(where, policy, history_password_file) if store is not None else None
    guard = None
    if lineage is not None and policy is Upstream.BLOCK:
        guard = UpstreamGuard(
            lineage.store,
            spool_path.with_name(spool_path.name + ".upstream"),
            upstream_refresh_seconds,
        )
        guard.refresh()  # before any query: the check rule refuses reads without the file
        lineage.on_kept = guard.refresh
    built = build_outputs(own, bindings)  # DataHub, alerts: as serve makes them
    producer = DriverProducer(
        DriverEvaluator(
            bindings,
            quarantine_config,
            store,
            own.history.minimums,
            sampling=sampling_of(
                own.evaluation.sample_rows, own.evaluation.facet_samples, None, where, spool_path
            ),
            reuse=_reuse(where, own, history_password_file) if store is not None else None,
        ),
        forwarder,
        Spool(spool_path, own),
        own,
        hold_seconds=hold_seconds,
        on_first_event=first_event,
        outputs=built,
        lineage=lineage,
    )
    producer.start()
    if guard is not None:
        guard.start()
    watch = watch_streams(builder, producer, bindings, namespace or "default")
    _attached = _Attached(
        producer, spool_path, wait_seconds, own_spool=spool is None, guard=guard, watch=watch
    )
    if _original_stop is None:
        _original_stop = SparkSession.stop
        SparkSession.stop = _patched_stop  # type: ignore[method-assign,assignment]

    # The engine's JVM helpers, on the driver and (through spark.jars) on every executor; without
    # them the same rules run on plain Spark functions.
    running = bool(os.environ.get("PYSPARK_GATEWAY_PORT"))  # under spark-submit
    if running:
        _add_jar_to_running_jvm(jar_path)
        if helpers is not None:
            _add_jar_to_running_jvm(helpers, ENGINE_PROBE_CLASS)
    jars = _appended(builder, "spark.jars", str(jar_path))
    if helpers is not None and str(helpers) not in jars.split(","):
        jars = f"{jars},{helpers}"
    settings = {
        "spark.jars": jars,
        "spark.extraListeners": _appended(builder, "spark.extraListeners", LISTENER_CLASS),
        "spark.openlineage.transport.type": "http",
        "spark.openlineage.transport.url": producer.url,
        "spark.openlineage.transport.endpoint": "/api/v1/lineage",
        "spark.openlineage.transport.auth.type": "api_key",
        "spark.openlineage.transport.auth.apiKey": api_key,
    }
    if namespace:
        settings["spark.openlineage.namespace"] = namespace
    if guard is not None:
        settings["spark.sql.extensions"] = _appended(
            builder, "spark.sql.extensions", EXTENSION_CLASS
        )
        settings[FILE_KEY] = str(guard.path.resolve())
    for key, value in settings.items():
        builder = builder.config(key, value)
    log.info(
        "lineage-quality attached: %d rule(s) on %d binding(s), events via %s",
        sum(len(b.rules) for b in bindings),
        len(bindings),
        producer.url,
    )
    return builder


def _lineage(
    where: str, policy: Upstream, password_file: str | Path | None
) -> LineageKeeper | None:
    """The lineage kept in the history store at `where`, as serve keeps it (none when off)."""
    from lineage_quality.lineage.keeper import LineageKeeper
    from lineage_quality.lineage.policy import Upstream
    from lineage_quality.lineage.store import open_lineage

    if policy is Upstream.OFF:
        return None
    return LineageKeeper(open_lineage(where, password_file=password_file), policy)


def is_attached() -> bool:
    """True between `attach` and the end of the job."""
    return _attached is not None and not _attached.finished


def verify() -> None:
    """Wait for the evaluations of the events sent so far; raise QualityGateFailed if a BLOCK
    rule failed or could not be evaluated, or if they did not end within `wait_seconds`."""
    attached = _attached
    if attached is None:
        raise ConfigError("lineage_quality.verify() needs lineage_quality.attach() first")
    with attached.lock:
        if attached.finished:
            raise ConfigError("lineage_quality.verify() after the Spark session was stopped")
        problems = attached.settle()
    if problems:
        raise QualityGateFailed(gate_message(problems), problems)


__all__ = ["attach", "is_attached", "verify"]


def _reuse(where: str, own: Any, password_file: str | Path | None) -> Any:
    """One evaluation per dataset version, kept in the history store (None: not reused)."""
    from lineage_quality.evaluation.reuse import Reuse
    from lineage_quality.history.versions import open_version_verdicts

    bounds = own.history.reuse_bounds
    if bounds is None:
        return None
    return Reuse(open_version_verdicts(where, bounds, password_file=password_file))

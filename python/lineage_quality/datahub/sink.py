"""The producer's DataHub result sink: MCPs for each evaluated event, written in the background.

`emit` builds the MCPs (fast, pure) and queues them; one thread hands each batch to every writer
(REST, file). DataHub being slow, down or refusing a batch never blocks or loses a lineage event:
the failure is logged and the batch dropped (the same results also travel on the event's
facets, which the spool keeps until forwarded). A full queue drops new batches with a warning.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from datahub.emitter.mcp import MetadataChangeProposalWrapper

from lineage_quality.datahub.config import (
    DEFAULT_ASSERTIONS,
    DEFAULT_NAMING,
    AssertionOptions,
    DataHubConfig,
    NamingConfig,
)
from lineage_quality.datahub.mcps import event_mark_mcps, event_mcps, platform_mcp, split_key
from lineage_quality.datahub.naming import dataset_name
from lineage_quality.datahub.published import PublishedAssertions
from lineage_quality.datahub.urns import assertion_urn, dataset_urn
from lineage_quality.errors import ConfigError
from lineage_quality.lineage.model import Mark, Origin
from lineage_quality.results import RuleResult
from lineage_quality.rules import Rule
from lineage_quality.values.refs import DatasetRef

if TYPE_CHECKING:
    from lineage_quality.contracts import BoundRules

log = logging.getLogger(__name__)

_STOP = object()
MAX_CONTRACTS_SENT = 10_000  # (contract, dataset) pairs remembered as sent in this process


class McpWriter(Protocol):
    def write(self, mcps: Sequence[MetadataChangeProposalWrapper]) -> None: ...

    def close(self) -> None: ...


def _contracts(bindings: Sequence[BoundRules]) -> dict[Rule, BoundRules]:
    out: dict[Rule, BoundRules] = {}
    for binding in bindings:
        for rule in binding.rules:
            try:
                out.setdefault(rule, binding)
            except TypeError:  # a parameter value that cannot be hashed: no contract name
                continue
    return out


def writers_of(config: DataHubConfig) -> list[McpWriter]:
    """The MCP writers of `config`: its file, its GMS (env checked first)."""
    from datahub.metadata.schema_classes import FabricTypeClass

    env = config.naming.env.upper()
    if env not in {k for k in vars(FabricTypeClass) if k.isupper()}:
        raise ConfigError(f"DataHub env {config.naming.env!r} is not a DataHub FabricType")
    writers: list[McpWriter] = []
    if config.file:
        from lineage_quality.datahub.file import McpFileWriter

        writers.append(McpFileWriter(config.file))
    if config.gms_url:
        from lineage_quality.datahub.rest import McpRestWriter

        writers.append(
            McpRestWriter(
                config.gms_url,
                token=config.token,
                openapi=config.openapi,
                timeout_seconds=config.timeout_seconds,
                retry_max_times=config.retry_max_times,
                cooldown_seconds=config.cooldown_seconds,
            )
        )
    return writers


class DataHubSink:
    def __init__(
        self,
        writers: Sequence[McpWriter],
        naming: NamingConfig = DEFAULT_NAMING,
        bindings: Sequence[BoundRules] = (),
        queue_size: int = 1000,
        options: AssertionOptions = DEFAULT_ASSERTIONS,
    ) -> None:
        self.writers = list(writers)
        self.naming = naming
        self.options = options
        self.published = PublishedAssertions(options.state)
        self._contracts = _contracts(bindings)
        self._contracts_sent: set[tuple[str, str]] = set()
        self._marked: dict[str, set[str]] = {}  # dataset URN -> its marks' assertions (bounded)
        self._mcp_lock = threading.Lock()
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max(1, queue_size))
        self._announced: set[int] = set()
        self.emitted = 0  # batches every writer took
        self.failed = 0  # batch x writer failures
        self.dropped = 0  # batches dropped because the queue was full
        self._thread = threading.Thread(target=self._run, name="lq-datahub", daemon=True)
        self._thread.start()

    @classmethod
    def from_config(cls, config: DataHubConfig, bindings: Sequence[BoundRules] = ()) -> DataHubSink:
        return cls(
            writers_of(config), config.naming, bindings, config.queue_size, config.assertions
        )

    def binding_of(self, rule: Rule) -> BoundRules | None:
        try:
            return self._contracts.get(rule)
        except TypeError:
            return None

    def contract_of(self, rule: Rule) -> str | None:
        binding = self.binding_of(rule)
        return binding.contract if binding else None

    def mcps(
        self, event: Mapping[str, Any], results: Mapping[DatasetRef, Sequence[RuleResult]]
    ) -> list[MetadataChangeProposalWrapper]:
        with self._mcp_lock:  # one event at a time: the contracts sent, the superseded URNs
            if len(self._contracts_sent) > MAX_CONTRACTS_SENT:
                self._contracts_sent.clear()  # sent again: upserts, idempotent
            return event_mcps(
                event,
                results,
                self.naming,
                options=self.options,
                published=self.published,
                binding_of=self.binding_of,
                contracts_sent=self._contracts_sent,
            )

    def upstream_of(self, origin: Origin) -> tuple[str | None, str | None]:
        """The upstream assertion's URN (when its contract is loaded here) and the upstream
        dataset's URN, for a mark's link (datahub/upstream.py)."""
        namespace, name = split_key(origin.dataset)
        found = dataset_name(namespace, name, None, self.naming)
        if found is None:
            return None, None
        dataset = dataset_urn(found)
        for rule, binding in self._contracts.items():
            if (rule.name or rule.id) == origin.rule and binding.matches(namespace, name):
                return assertion_urn(rule, dataset), dataset
        return None, dataset

    def emit_marks(
        self, event: Mapping[str, Any], marks: Mapping[DatasetRef, Sequence[Mark]]
    ) -> None:
        """Queue the propagated assertions of one COMPLETE's outputs; never raises, never
        waits."""
        try:
            with self._mcp_lock:
                batch = event_mark_mcps(
                    event, marks, self.upstream_of, self._marked, self.naming, self.options
                )
        except Exception:
            log.exception("could not build DataHub MCPs for the marks of an event; not sent")
            return
        self._offer(batch)

    def emit(
        self, event: Mapping[str, Any], results: Mapping[DatasetRef, Sequence[RuleResult]]
    ) -> None:
        """Queue the MCPs of one evaluated event; never raises, never waits."""
        try:
            batch = self.mcps(event, results)
        except Exception:
            log.exception("could not build DataHub MCPs for an event; its results are not sent")
            return
        self._offer(batch)

    def _offer(self, batch: list[MetadataChangeProposalWrapper]) -> None:
        if not batch:
            return
        try:
            self._queue.put_nowait(batch)
        except queue.Full:
            self.dropped += 1
            log.warning("DataHub queue full: dropped the %d MCPs of one event", len(batch))

    def _write(self, batch: list[MetadataChangeProposalWrapper]) -> None:
        ok = True
        for writer in self.writers:
            items = batch
            if id(writer) not in self._announced:
                items = [platform_mcp(), *batch]
            try:
                writer.write(items)
            except Exception as exc:
                ok = False
                self.failed += 1
                log.warning(
                    "DataHub %s did not take %d MCPs: %s", type(writer).__name__, len(items), exc
                )
            else:
                self._announced.add(id(writer))
        if ok:
            self.emitted += 1

    def _run(self) -> None:
        while True:
            batch = self._queue.get()
            try:
                if batch is _STOP:
                    return
                self._write(batch)
            finally:
                self._queue.task_done()

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until every queued batch was handed to the writers; False on timeout."""
        done = threading.Event()

        def waiter() -> None:
            self._queue.join()
            done.set()

        threading.Thread(target=waiter, daemon=True).start()
        return done.wait(timeout)

    def close(self, timeout: float = 30.0) -> None:
        if not self.flush(timeout):
            log.warning("DataHub sink closed with MCPs still queued")
        try:
            self._queue.put(_STOP, timeout=1)
        except queue.Full:
            pass  # the worker is a daemon thread: it ends with the process
        else:
            self._thread.join(timeout=5)
        for writer in self.writers:
            try:
                writer.close()
            except Exception as exc:
                log.warning("closing DataHub %s: %s", type(writer).__name__, exc)

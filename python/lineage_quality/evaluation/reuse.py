"""One evaluation per dataset version: a version already evaluated with the same rules is not
scanned again. A later run that reads it, a re-report, another producer sharing the history
store: each gets that evaluation's verdicts and metrics, each verdict saying where it came from
(`reusedFrom`: the evaluating run and when, in the facet's `params`).

What a version is (`version_key`): for Delta and Iceberg the version the run read or wrote, as
the event's `version` facet names it (a Delta version also by its commit file's size and time,
so a table dropped and made again at the same path is another version); for plain files the
files the run could see, each by path, size and modification time. What a rule set is
(`rules_key`): every bound rule as declared, the contract's format and profile, the evaluator's
quarantine and history settings, and this package's version. Any doubt means a fresh
evaluation: no version facet, files that cannot be listed, an empty listing, an ERROR among the
results, a rule whose verdict depends on when it is evaluated (freshness, a SQL text calling the
clock or a random number).

A reused verdict adds no point to the history: the version's points are those of the run that
evaluated it (history/judge.py), so a version read ten times counts once in a baseline. Its
history rules keep the verdict they got then (the same version compared with the same past).

Within one producer, runs asking for the same version at once wait for the first evaluation
(`single flight`); across producers two may evaluate one version at the same moment (the first
kept stays).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from lineage_quality.contracts import BoundRules
from lineage_quality.evaluation.datasets import AsOf
from lineage_quality.evaluation.written import LeftByRun
from lineage_quality.history.verdict_json import results_of, results_text
from lineage_quality.history.versions import VersionVerdicts
from lineage_quality.results import NOT_EVALUATED, RuleResult, Status
from lineage_quality.rules import Rule
from lineage_quality.rules.history import Compare
from lineage_quality.version import __version__

log = logging.getLogger(__name__)

# SQL words whose value changes from one evaluation to the next: such a rule is never reused.
_CLOCK = re.compile(
    r"current_(date|timestamp|timezone)|\bnow\s*\(|unix_timestamp|localtimestamp|"
    r"\brandn?\s*\(|\buuid\s*\(|\bshuffle\s*\(",
    re.IGNORECASE,
)
_PENDING_MAX = 4096  # versions being evaluated at once, at most (more: not single-flighted)


def timeless(rule: Rule) -> bool:
    """Whether the rule's verdict on one version is the same whenever it is evaluated."""
    if rule.kind.value == "freshness":  # rows younger/older than now
        return False
    if rule.history is not None and rule.history.compare is Compare.FRESHNESS:
        return False
    return _CLOCK.search(repr(rule)) is None


def rules_key(groups: Sequence[BoundRules], settings: object = None) -> str | None:
    """The rule set's hash (its rules as declared, formats, profile, `settings`: what else
    changes a verdict), or None when a rule's verdict depends on when it is evaluated."""
    if not all(timeless(r) for g in groups for r in g.rules):
        return None
    declared = [(g.contract, g.object_name, g.format, g.profile, g.rules) for g in groups]
    text = canonical((__version__, declared, settings))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def canonical(value: object) -> str:
    """`value` as text that is the same in every process: attrs values field by field, sets
    and dicts sorted (their order follows string hashing, which differs between processes)."""
    if attrs.has(type(value)):
        found = attrs.fields(type(value))  # type: ignore[arg-type]  # attrs.has said so
        fields = ", ".join(f"{f.name}={canonical(getattr(value, f.name))}" for f in found)
        return f"{type(value).__name__}({fields})"
    if isinstance(value, set | frozenset):
        return "{" + ", ".join(sorted(canonical(v) for v in value)) + "}"
    if isinstance(value, dict):
        items = sorted(f"{canonical(k)}: {canonical(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(canonical(v) for v in value) + "]"
    return repr(value)


def files_key(location: str, left: LeftByRun) -> str | None:
    """A plain-file dataset's version: the files the run could see (path, size, time)."""
    if not left.kept:
        return None
    files = [(f.path, f.size, f.modified_ms) for f in left.kept]
    return _digest(["files", location, files])


def table_key(
    location: str, as_of: AsOf, fmt: str | None, stat: Callable[[str], tuple[int, int] | None]
) -> str | None:
    """A Delta/Iceberg version: the one the event named (a time alone is a doubt). A Delta
    version is also known by its commit file (`stat(path)`: size and time, None if absent)."""
    version = as_of.version
    if version is None:
        return None
    commit = None
    if version.isdigit():
        commit = stat(f"{location.rstrip('/')}/_delta_log/{int(version):020d}.json")
    if commit is None and fmt != "iceberg":
        return None  # a Delta commit not found, or a format not known: doubt
    return _digest(["table", location, version, commit])


def _digest(value: object) -> str:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def stat_file(spark: Any, path: str) -> tuple[int, int] | None:
    """(size, modification ms) of one file (a local path, else through Hadoop's FileSystem in
    the evaluator's JVM); None when it is not there or cannot be asked."""
    try:
        if "://" not in path:
            found = os.stat(path)
            return found.st_size, found.st_mtime_ns // 1_000_000
        jvm = spark.sparkContext._jvm
        where = jvm.org.apache.hadoop.fs.Path(path)
        fs = where.getFileSystem(spark._jsc.hadoopConfiguration())
        status = fs.getFileStatus(where)
        return int(status.getLen()), int(status.getModificationTime())
    except Exception:  # absent (FileNotFoundException, OSError) or unreachable: no key
        return None


def keepable(results: Sequence[RuleResult]) -> bool:
    """Whether these results judge the version itself: no ERROR, nothing left unevaluated."""
    return bool(results) and not any(
        r.status is Status.ERROR or r.skip_reason in NOT_EVALUATED for r in results
    )


def reused(results: Sequence[RuleResult], run_id: str, evaluated_ms: int) -> list[RuleResult]:
    """`results` marked as another run's (the facet's `params.reusedFrom`)."""
    when = datetime.datetime.fromtimestamp(evaluated_ms / 1000, datetime.UTC)
    source = (("runId", run_id), ("evaluatedAt", when.isoformat(timespec="milliseconds")))
    return [attrs.evolve(r, reused_from=source) for r in results]


class Reuse:
    """The verdicts of evaluated versions (`store`), asked before a scan and kept after one."""

    def __init__(self, store: VersionVerdicts) -> None:
        self.store = store
        self.reused = 0  # evaluations answered from the store (not scanned)
        self._pending: dict[tuple[str, str, str], threading.Event] = {}
        self._lock = threading.Lock()

    def results(
        self,
        dataset: str,
        version: str,
        rules: str,
        run_id: str,
        declared: Sequence[Rule],
        compute: Callable[[], list[RuleResult]],
        fits: Callable[[list[RuleResult]], bool] = lambda _: True,
    ) -> list[RuleResult]:
        """The verdicts kept for (dataset, version, rules), marked as reused, if they `fit`
        what this run says of the data (an output's rows); else `compute()`'s, kept when they
        judge the version. `declared`: the rules the kept ones are matched to."""
        key = (dataset, version, rules)
        done = self._enter(key)
        try:
            kept = self._find(key, declared)
            if kept is not None and fits(kept):
                self.reused += 1
                return kept
            results = compute()
            if keepable(results):
                try:
                    self.store.keep(dataset, version, rules, run_id, results_text(results))
                except Exception as exc:  # the store down: the verdicts stand, not kept
                    log.warning("%s: verdicts of this version not kept for reuse: %s", dataset, exc)
            return results
        finally:
            if done is not None:
                with self._lock:
                    self._pending.pop(key, None)
                done.set()

    def _enter(self, key: tuple[str, str, str]) -> threading.Event | None:
        """Wait for an evaluation of the same version under way here; the caller's own event
        (None past `_PENDING_MAX`: then not single-flighted)."""
        while True:
            with self._lock:
                waiting = self._pending.get(key)
                if waiting is None:
                    if len(self._pending) >= _PENDING_MAX:
                        return None
                    done = self._pending[key] = threading.Event()
                    return done
            waiting.wait()

    def _find(self, key: tuple[str, str, str], declared: Sequence[Rule]) -> list[RuleResult] | None:
        try:
            kept = self.store.find(*key)
        except Exception as exc:  # the store down: evaluated as if nothing was kept
            log.warning("%s: kept verdicts cannot be read (%s): evaluated", key[0], exc)
            return None
        if kept is None:
            return None
        results = results_of(kept.results, declared)
        if results is None:
            log.warning("%s: kept verdicts unreadable: evaluated again", key[0])
            return None
        log.info("%s: version evaluated by run %s: verdicts reused", key[0], kept.run_id)
        return reused(results, kept.run_id, kept.evaluated_ms)

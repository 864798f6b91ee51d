"""Which rows an output's verdict has to read: the run's own, merged with the kept states of the
version it appended to (engine/increment.py), or the whole version.

A plain-file append is judged on its own files when all of this holds, else the version is read
whole (and its states kept for the next append):

- the run says what it wrote (`outputStatistics`: files and bytes) and did not replace the data;
- its files are the newest ones left at its COMPLETE, and they are as many and as large as it
  wrote (another writer's files among them, or a tie in modification times, and the split is
  not sure);
- the older files are exactly a version whose states are kept (their paths, sizes and times,
  digested: a file rewritten, removed or added since is another version);
- the contract's scope is `table` (the default) and not `exact: true` (`lineageQuality.scope`);
- every rule's measure has a mergeable state (engine/increment.py `why_not_merged`).

The scope `write` judges the run's rows only; every verdict then says so in `params.scope`.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence

import attrs
from pyspark.sql import DataFrame

from lineage_quality.contracts import BoundRules
from lineage_quality.engine.increment import evaluate_increment, evaluate_keeping_states
from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.engine.states import States
from lineage_quality.errors import DatasetError
from lineage_quality.evaluation.storage import StoredFile
from lineage_quality.evaluation.table_appends import TableAppend
from lineage_quality.evaluation.written import LeftByRun, Written
from lineage_quality.history.states import StateStore
from lineage_quality.results import RuleResult
from lineage_quality.rules import Rule

log = logging.getLogger(__name__)

WAIT_FOR_STATES_SECONDS = 300.0  # an append waits this long for the states of the version before


def scope_of(groups: Sequence[BoundRules]) -> str:
    """The scope of a dataset's evaluation: the strictest its contracts ask for (`exact` over
    `table`; `write` only when every contract says so: a table verdict is never dropped)."""
    scopes = {g.scope for g in groups}
    if "exact" in scopes:
        return "exact"
    return "write" if scopes == {"write"} else "table"


@attrs.frozen
class Split:
    """A plain-file append's files: the run's own (`added`) and those of the version before."""

    added: tuple[StoredFile, ...]
    before: tuple[StoredFile, ...]


def files_version(files: Sequence[StoredFile]) -> str:
    """A plain-file version's name: a digest of its files (path, size, modification time)."""
    digest = hashlib.sha256()
    for f in sorted(files, key=lambda f: f.path):
        digest.update(f"{f.path}\t{f.size}\t{f.modified_ms}\n".encode())
    return f"files:{len(files)}:{digest.hexdigest()}"


def split_append(left: LeftByRun, account: Written | None) -> Split | None:
    """The run's own files among those it left, and the older ones, when that is sure (module
    docstring); None otherwise."""
    if account is None or account.replaced or not account.files:
        return None
    kept = sorted(left.kept, key=lambda f: (f.modified_ms, f.path))
    count = account.files
    if count > len(kept):
        return None
    added, before = tuple(kept[-count:]), tuple(kept[:-count])
    if before and before[-1].modified_ms >= added[0].modified_ms:
        return None  # a tie: which of them the run wrote cannot be told by time
    if account.size is not None and sum(f.size for f in added) != account.size:
        return None  # another writer's file among the newest, or one of the run's rewritten
    return Split(added, before)


@attrs.frozen
class Output:
    """An output to judge: the dataset, the run that wrote it (and its own account of the
    write), the rules bound to it, whether the profile is asked for, and the scope."""

    dataset: str
    run_id: str
    rules: Sequence[Rule]
    profile: bool
    scope: str
    account: Written | None


@attrs.frozen
class Judged:
    """An output's results, the states to keep for its version, and what was read."""

    results: list[RuleResult]
    frame: DataFrame  # the rows the verdicts were measured on (the quarantine selects from it)
    scope: str | None = None  # what the verdicts cover, when not the version as read whole
    # the rows the run's commit added were counted and are what it says it wrote: its account
    # of the write is checked (a table format's append the listener calls CREATE included)
    checked: bool = False


class Increments:
    """Plain-file appends judged on their own rows (module docstring); `store` keeps the states
    (None: no history store, every version is read whole)."""

    def __init__(self, store: StateStore | None) -> None:
        self.store = store
        self.merged = 0  # appends judged from kept states (for tests and the bench)
        # versions being evaluated here now: an append to one of them waits for its states
        # rather than reading the table whole (events are evaluated side by side)
        self._evaluating: dict[tuple[str, str], threading.Event] = {}
        self._lock = threading.Lock()

    def _kept(self, dataset: str, version: str) -> tuple[States, str] | None:
        assert self.store is not None
        found = self.store.get(dataset, version)
        if found is None:
            with self._lock:
                underway = self._evaluating.get((dataset, version))
            if underway is not None and underway.wait(WAIT_FOR_STATES_SECONDS):
                found = self.store.get(dataset, version)
        return found

    def judge(
        self,
        output: Output,
        read: Callable[[Sequence[StoredFile] | None], DataFrame],
        left: LeftByRun | None,
    ) -> Judged:
        """The output's results (`read(files)`: the dataset's rows in those files; None: as
        the run left it). Meanwhile, the version it evaluates is known as under way."""
        if left is None or self.store is None:
            return self._judge(output, read, left)
        with self._underway(output.dataset, files_version(left.kept)):
            return self._judge(output, read, left)

    @contextlib.contextmanager
    def _underway(self, dataset: str, version: str) -> Iterator[None]:
        """Version `version` of `dataset` known as being evaluated here, for the block."""
        key = (dataset, version)
        done = threading.Event()
        with self._lock:
            self._evaluating.setdefault(key, done)
        try:
            yield
        finally:
            done.set()
            with self._lock:
                if self._evaluating.get(key) is done:
                    del self._evaluating[key]

    def judge_table(
        self,
        output: Output,
        version: str,
        at: Callable[[str], DataFrame],
        appended: Callable[[], TableAppend | None],
    ) -> Judged:
        """A table format's output at `version` (`at(v)`: the table at version v), judged on the
        rows its commit appended (`appended()`) where it can, as plain-file appends are."""
        dataset, rules, profile, account = (
            output.dataset,
            output.rules,
            output.profile,
            output.account,
        )
        if self.store is None:
            whole = at(version)
            results = evaluate_dataframe(whole, rules, profile)
            # the listener 1.53 on Spark 4 calls a Delta append CREATE, with the append's
            # statistics: the commit's own rows say whether they are what the run wrote
            checked = False
            if account is not None and account.replaced and account.rows is not None:
                append = _appended(dataset, version, appended)
                checked = append is not None and append.added.count() == account.rows
            return Judged(results, whole, checked=checked)
        with self._underway(dataset, f"table:{version}"):
            return self._judge_table(output, version, at, appended)

    def _judge_table(
        self,
        output: Output,
        version: str,
        at: Callable[[str], DataFrame],
        appended: Callable[[], TableAppend | None],
    ) -> Judged:
        assert self.store is not None
        dataset, run_id, rules, profile, scope, account = attrs.astuple(output, recurse=False)
        # the table format's own history says whether the commit appended (the listener 1.53
        # calls a Delta append CREATE): not the event's lifecycle state
        append = _appended(dataset, version, appended) if scope != "exact" else None
        if scope == "write" and append is not None:
            results = evaluate_dataframe(append.added, rules, profile)
            _check_rows(account, _rows(results), f"the rows of commit {version}")
            what = f"the {append.files} file(s) commit {version} added only (scope: write)"
            return Judged(results, append.added, what, checked=True)
        found = self._kept(dataset, f"table:{append.before}") if append is not None else None
        if append is not None and found is not None:
            kept, by_run = found
            before = append.before
            merged = evaluate_increment(append.added, lambda: at(before), rules, profile, kept)
            if merged is not None and _agrees(account, _rows(merged[0], kept.rows)):
                self.merged += 1
                self.store.put(dataset, f"table:{version}", merged[1], run_id)
                what = (
                    f"the table at version {version}: {kept.merged + 1} kept state(s) of "
                    f"version {before} (the latest kept by run {by_run}) merged with the "
                    f"{append.files} file(s) its commit added"
                )
                return Judged(merged[0], append.added, what, checked=True)
            log.info("%s: version %s's append cannot be merged; read whole", dataset, version)
        whole = at(version)
        results, states = evaluate_keeping_states(whole, rules, profile)
        checked = False
        if append is not None and account is not None and account.rows is not None:
            checked = append.added.count() == account.rows  # from the files' footers
        if states is not None and not self.store.put(dataset, f"table:{version}", states, run_id):
            log.info("%s: states too large to keep", dataset)
        return Judged(results, whole, checked=checked)

    def _judge(
        self,
        output: Output,
        read: Callable[[Sequence[StoredFile] | None], DataFrame],
        left: LeftByRun | None,
    ) -> Judged:
        dataset, run_id, rules, profile, scope, account = attrs.astuple(output, recurse=False)
        split = split_append(left, account) if left is not None else None
        if scope == "write" and split is not None:
            added = read(split.added)
            results = evaluate_dataframe(added, rules, profile)
            _check_rows(account, _rows(results), "the run's files")
            what = f"the run's {len(split.added)} file(s) only (scope: write)"
            return Judged(results, added, what)
        # the files the run left, by name: a file written since, listed by a lazy read, is not
        # taken for the run's (opened only where the table is read whole)
        if self.store is None or left is None:
            whole = read(left.kept if left is not None else None)
            return Judged(evaluate_dataframe(whole, rules, profile), whole)
        found = None
        if split is not None and split.before and scope != "exact":
            found = self._kept(dataset, files_version(split.before))
            if found is None:
                log.info(
                    "%s: no kept states of the version appended to (%s); read whole",
                    dataset,
                    files_version(split.before),
                )
        elif split is None and account is not None and not account.replaced:
            log.info("%s: the run's own files cannot be told apart; read whole", dataset)
        if split is not None and found is not None:
            kept, by_run = found
            added = read(split.added)
            before = split.before
            merged = evaluate_increment(added, lambda: read(before), rules, profile, kept)
            if merged is None:
                log.info("%s: the append's verdicts cannot be merged; read whole", dataset)
            elif not _agrees(account, _rows(merged[0], kept.rows)):
                log.info(
                    "%s: the append's files hold other rows than it wrote; read whole", dataset
                )
            else:
                self.merged += 1
                self.store.put(dataset, files_version(left.kept), merged[1], run_id)
                what = (
                    f"the table: {kept.merged + 1} kept state(s) of its {len(split.before)} "
                    f"older file(s) (the latest kept by run {by_run}) merged with the run's "
                    f"{len(split.added)} file(s)"
                )
                return Judged(merged[0], added, what)
        whole = read(left.kept)
        results, states = evaluate_keeping_states(whole, rules, profile)
        if states is not None and not self.store.put(
            dataset, files_version(left.kept), states, run_id
        ):
            log.info("%s: states too large to keep", dataset)
        return Judged(results, whole)


def _appended(
    dataset: str, version: str, appended: Callable[[], TableAppend | None]
) -> TableAppend | None:
    try:
        return appended()
    except Exception as exc:  # its history unreadable here: the version is read whole
        log.info("%s: cannot tell what version %s appended: %s", dataset, version, exc)
        return None


def _agrees(account: Written | None, rows: int | None) -> bool:
    return account is None or account.rows is None or rows == account.rows


def _check_rows(account: Written | None, rows: int | None, what: str) -> None:
    if not _agrees(account, rows):
        assert account is not None
        raise DatasetError(
            f"{what} hold {rows} rows, run {account.run_id} wrote {account.rows}: they are not "
            "what it wrote"
        )


def _rows(results: Sequence[RuleResult], kept: int = 0) -> int | None:
    found = next((r.row_count for r in results if r.row_count is not None), None)
    return None if found is None else found - kept

"""Reconciliations (kinds/reconcile.py) judged across one run's datasets: an output's number
against the same number of the input the run read, at the version it read.

Before the scans (`extend`), each reconciliation adds what it needs to the scan of the datasets
it compares, as hidden rules (`HIDDEN`): the row count, a column's sum (a `statistic` rule) or
its distinct count (a `duplicateValues` rule's grouped pass), on the output and on the matching
input. An input with a contract of its own is scanned once, its rules and these together; one
without gets a scan for these alone, at the version the run read. After the scans (`judge`), the
hidden rules' numbers are compared and the reconciliation's SKIPPED placeholder (engine/plan.py)
becomes its verdict; the hidden results are never reported (`visible`). `references` joins the
output's column with the input's (a left anti join of the distinct values), its own pass.

An input the pattern does not match, several that it does, or an input whose version cannot be
read make the rule an ERROR saying so: never a comparison with other data.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import attrs
from pyspark.sql import DataFrame

from lineage_quality.contracts import BoundRules
from lineage_quality.contracts.binding import DatasetPattern, table_key
from lineage_quality.kinds import RuleKind
from lineage_quality.kinds.reconcile import ReconcileOptions, input_column
from lineage_quality.results import (
    ACROSS_DATASETS,
    Cause,
    RuleResult,
    Status,
    error_result,
)
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.event import Event, EventDataset
from lineage_quality.values.refs import DatasetRef

HIDDEN = "reconcile-side"  # the origin of the rules a reconciliation adds to a scan
_ANY = Threshold(Operator.GREATER_OR_EQUAL, -math.inf)  # measured, never judged
Frame = Callable[[DatasetRef], DataFrame]
Bound = dict[DatasetRef, list[BoundRules]]


def visible(results: Sequence[RuleResult]) -> list[RuleResult]:
    """The results to report: without the hidden rules of reconciliations."""
    return [r for r in results if r.rule.origin != HIDDEN]


def is_reconciliation(rule: Rule) -> bool:
    return rule.kind is RuleKind.RECONCILE and rule.active


def _hidden(measure: str, column: str | None) -> tuple[Rule, ...]:
    """The hidden rules that measure `measure` of a dataset (its rows always)."""
    rows = Rule(id="lq.reconcile.rows", kind=RuleKind.ROW_COUNT, threshold=_ANY, origin=HIDDEN,
                action="LOG")  # fmt: skip
    if measure == "sum" and column is not None:
        return rows, Rule(
            id=f"lq.reconcile.sum.{column}", kind=RuleKind.STATISTIC, columns=(column,),
            statistic="sum", threshold=_ANY, origin=HIDDEN, action="LOG",
        )  # fmt: skip
    if measure == "distinct" and column is not None:
        return rows, Rule(
            id=f"lq.reconcile.distinct.{column}", kind=RuleKind.DUPLICATE_VALUES,
            columns=(column,), threshold=_ANY, origin=HIDDEN, action="LOG",
        )  # fmt: skip
    return (rows,)


def matching(rule: Rule, event: Event) -> list[EventDataset]:
    """The run's inputs that the reconciliation's `input` names: a dataset name with shell
    globs (`*` across `/`), matched as a binding matches, or a catalog table."""
    options = rule.options
    assert isinstance(options, ReconcileOptions)
    pattern = DatasetPattern("*", options.input)
    table = table_key(options.input)
    return [
        d
        for d in event.inputs
        if pattern.matches(d.ref.namespace, d.ref.name)
        or any(table_key(t) == table for t in d.tables)
    ]


@attrs.frozen
class Sides:
    """What one dataset's scan measured for reconciliations."""

    results: Sequence[RuleResult]

    def failure(self) -> str | None:
        """Why the hidden rules could not measure (the dataset unreadable...), or None."""
        for r in self.results:
            if r.rule.origin == HIDDEN and r.status in (Status.ERROR, Status.SKIPPED):
                return r.message or r.skip_reason or r.status.value
        return None

    def rows(self) -> int | None:
        return next((r.row_count for r in self.results if r.row_count is not None), None)

    def number(self, measure: str, column: str | None) -> int | float | None:
        for r in self.results:
            if r.rule.origin != HIDDEN:
                continue
            if measure == "rowCount" and r.rule.kind is RuleKind.ROW_COUNT:
                return r.row_count if r.row_count is not None else r.actual
            if measure == "sum" and r.rule.kind is RuleKind.STATISTIC and r.rule.column == column:
                return r.actual
            if (
                measure == "distinct"
                and r.rule.kind is RuleKind.DUPLICATE_VALUES
                and r.rule.column == column
                and r.measures is not None
            ):
                found = r.measures.column(r.rule.columns[0])
                return None if found is None else found.distinct
        return None


class Reconciler:
    """Adds the hidden rules of an event's reconciliations to its bound datasets, and judges the
    reconciliations once the datasets are measured."""

    def __init__(self) -> None:
        # hidden groups by what they measure: the same objects every time (the evaluation
        # memo keys on them), bounded by the contracts' reconciliations
        self._groups: dict[tuple[str, str | None, str | None], BoundRules] = {}

    def _group(self, measure: str, column: str | None, input: str | None = None) -> BoundRules:
        """The hidden rules measuring `measure`; on an input, bound by the reconciliation's
        `input` (the contract names what may be read, as any binding does)."""
        key = (measure, column, input)
        found = self._groups.get(key)
        if found is None:
            found = self._groups[key] = BoundRules(
                contract="(reconciliation)",
                object_name="(reconciliation)",
                patterns=() if input is None else (DatasetPattern("*", input),),
                rules=_hidden(measure, column),
                tables=() if input is None or "/" in input else (input,),
            )
        return found

    def extend(self, event: Event, bound: Bound) -> Bound:
        """`bound` with the hidden rules each reconciliation needs on its output and on the one
        input it names, in the event's order (inputs first: measured before outputs)."""
        added: dict[DatasetRef, list[BoundRules]] = {}
        for ref, groups in bound.items():
            if ref.role != "outputs":
                continue
            for rule in (r for g in groups for r in g.rules if is_reconciliation(r)):
                options = rule.options
                assert isinstance(options, ReconcileOptions)
                measure = options.reconcile
                if measure != "references":  # references: its own pass, a join of the two
                    added.setdefault(ref, []).append(self._group(measure, rule.column))
                inputs = matching(rule, event)
                if len(inputs) == 1:  # references: the input's rows, read as the run read it
                    column = None if measure == "references" else input_column(rule)
                    group = self._group(measure, column, options.input)
                    added.setdefault(inputs[0].ref, []).append(group)
        if not added:
            return bound
        out: Bound = {}
        for dataset in event.datasets:
            ref = dataset.ref
            groups = [*bound.get(ref, []), *added.get(ref, [])]
            if groups:
                out[ref] = list(dict.fromkeys(groups))
        return out

    def judge(
        self,
        event: Event,
        ref: DatasetRef,
        results: Sequence[RuleResult],
        measured: Mapping[DatasetRef, Sequence[RuleResult]],
        frame: Frame,
    ) -> list[RuleResult]:
        """Output `ref`'s results with each reconciliation judged (`measured`: the results of
        the event's datasets so far, hidden rules included; `frame`: a dataset as its run left
        it, for `references`)."""
        if ref.role != "outputs":
            return list(results)
        return [
            self._judge(r.rule, event, ref, results, measured, frame)
            if is_reconciliation(r.rule) and r.skip_reason == ACROSS_DATASETS
            else r
            for r in results
        ]

    def _judge(
        self,
        rule: Rule,
        event: Event,
        ref: DatasetRef,
        results: Sequence[RuleResult],
        measured: Mapping[DatasetRef, Sequence[RuleResult]],
        frame: Frame,
    ) -> RuleResult:
        options = rule.options
        assert isinstance(options, ReconcileOptions)
        inputs = matching(rule, event)
        if not inputs:
            read = ", ".join(d.key for d in event.inputs) or "none"
            return error_result(
                rule,
                f"the run read no input matching {options.input!r} (it read: {read}): "
                "nothing to reconcile with",
                Cause.INVALID_RULE,
            )
        if len(inputs) > 1:
            names = ", ".join(d.key for d in inputs)
            return error_result(
                rule,
                f"{options.input!r} matches {len(inputs)} inputs of the run ({names}): name one",
                Cause.INVALID_RULE,
            )
        source = inputs[0]
        compared: list[tuple[str, object]] = [("input", source.key)]
        if source.version is not None:
            compared.append(("inputVersion", source.version))
        mine = Sides(results)
        theirs = Sides(measured.get(source.ref, ()))
        if options.reconcile == "references":
            why = theirs.failure()
            if why is not None:
                return error_result(
                    rule, f"cannot read input {source.key} as the run read it: {why}",
                    Cause.UNREADABLE,
                )  # fmt: skip
            return self._references(rule, event, ref, source, compared, frame)
        for side, where in ((theirs, f"input {source.key}"), (mine, "the output")):
            why = side.failure()
            if why is not None:
                return error_result(
                    rule, f"cannot measure {where} as the run left it: {why}", Cause.UNREADABLE
                )
        column = input_column(rule)
        out_value = mine.number(options.reconcile, rule.column)
        in_value = theirs.number(options.reconcile, column)
        if out_value is None or in_value is None:
            return error_result(
                rule, f"{options.reconcile} was not measured on both datasets", Cause.QUERY_FAILED
            )
        compared += [("inputValue", in_value), ("outputValue", out_value)]
        difference = out_value - in_value
        actual: int | float = difference
        if rule.unit.value == "percent":
            if in_value == 0:
                actual = 0.0 if difference == 0 else math.copysign(math.inf, difference)
            else:
                actual = 100.0 * difference / abs(in_value)
        status = Status.PASSED if rule.threshold.holds(actual) else Status.FAILED
        return RuleResult(
            rule=rule, status=status, actual=actual, measured=out_value,
            row_count=mine.rows(), compared=tuple(compared),
        )  # fmt: skip

    def _references(
        self,
        rule: Rule,
        event: Event,
        ref: DatasetRef,
        source: EventDataset,
        compared: list[tuple[str, object]],
        frame: Frame,
    ) -> RuleResult:
        """The output's values of the column not found in the input's, one anti join of the
        distinct values (nulls are no reference: left out)."""
        column, theirs = rule.column, input_column(rule)
        assert column is not None and theirs is not None
        try:
            out = frame(ref).select(column).where(f"`{column}` IS NOT NULL").distinct()
            keys = frame(source.ref).select(theirs).distinct()
            missing = out.join(keys, out[column] == keys[theirs], "left_anti").count()
        except Exception as exc:  # unreadable, a column not there: an ERROR, never a pass
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
            return error_result(rule, f"cannot join with input {source.key}: {first}")
        compared.append(("missing", missing))
        status = Status.PASSED if rule.threshold.holds(missing) else Status.FAILED
        return RuleResult(
            rule=rule, status=status, actual=missing, failing_rows=missing,
            compared=tuple(compared),
        )  # fmt: skip

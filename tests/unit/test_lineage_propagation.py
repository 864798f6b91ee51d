"""The propagation rule along lineage (issue 39), without Spark: a 3-hop pipeline raw -> clean ->
agg, with a branch raw -> countries that reads only healthy columns of raw. Events are shaped as
the OpenLineage Spark listener writes them (`columnLineage` with DIRECT and INDIRECT
transformations); verdicts are real `RuleResult`s; the writes kept between runs are those
`observe` returns, looked up as the store looks them up (the latest before the run)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lineage_quality.engine import verdict
from lineage_quality.kinds import RuleKind
from lineage_quality.lineage import (
    Mark,
    Observed,
    Origin,
    Read,
    Upstream,
    Write,
    decide,
    observe,
    parse_upstream,
)
from lineage_quality.lineage.column_lineage import column_lineage
from lineage_quality.results import RuleResult, error_result
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.event import datasets_of
from lineage_quality.values.refs import DatasetRef

RAW, CLEAN, AGG, COUNTRIES = "/lake/raw", "/lake/clean", "/lake/agg", "/lake/countries"
NOT_NULL = Rule(
    id="raw.customer_id.not_null",
    kind=RuleKind.NULL_VALUES,
    columns=["customer_id"],
    threshold=Threshold(Operator.MUST_BE, 0),
    name="customer_id_not_null",
)
ROWS = Rule(
    id="raw.rows",
    kind=RuleKind.ROW_COUNT,
    threshold=Threshold(Operator.GREATER_THAN, 0),
    name="raw_not_empty",
    action="BLOCK",
)


def _direct(dataset: str, field: str, subtype: str = "IDENTITY") -> dict[str, Any]:
    return {
        "namespace": "file",
        "name": dataset,
        "field": field,
        "transformations": [{"type": "DIRECT", "subtype": subtype, "description": ""}],
    }


def _indirect(dataset: str, field: str, subtype: str) -> dict[str, Any]:
    return {
        "namespace": "file",
        "name": dataset,
        "field": field,
        "transformations": [{"type": "INDIRECT", "subtype": subtype, "description": ""}],
    }


def _event(
    run: str,
    minute: int,
    inputs: Sequence[str],
    outputs: Mapping[str, Mapping[str, list[dict[str, Any]]] | None],
) -> dict[str, Any]:
    """A COMPLETE of `run` at 06:`minute`; `outputs`: each output's column lineage (None: no
    facet)."""

    def output(name: str, fields: Mapping[str, list[dict[str, Any]]] | None) -> dict[str, Any]:
        facets: dict[str, Any] = {"schema": {"fields": []}}
        if fields is not None:
            facets["columnLineage"] = {
                "fields": {column: {"inputFields": f} for column, f in fields.items()}
            }
        return {"namespace": "file", "name": name, "facets": facets}

    return {
        "eventType": "COMPLETE",
        "eventTime": f"2026-11-27T06:{minute:02d}:00.000Z",
        "run": {"runId": run},
        "job": {"namespace": "spark", "name": run.rsplit("-", 1)[0]},
        "inputs": [{"namespace": "file", "name": n, "facets": {}} for n in inputs],
        "outputs": [output(name, fields) for name, fields in outputs.items()],
    }


def write_raw(run: str, minute: int) -> dict[str, Any]:
    return _event(run, minute, [], {RAW: None})


def run_clean(run: str, minute: int) -> dict[str, Any]:
    return _event(
        run,
        minute,
        [RAW],
        {
            CLEAN: {
                "customer_id": [_direct(RAW, "customer_id")],
                # converted from amount; rows filtered on customer_id: not derived from it
                "amount_eur": [
                    _direct(RAW, "amount", "TRANSFORMATION"),
                    _indirect(RAW, "customer_id", "FILTER"),
                ],
                "country": [_direct(RAW, "country")],
            }
        },
    )


def run_agg(run: str, minute: int) -> dict[str, Any]:
    return _event(
        run,
        minute,
        [CLEAN],
        {
            AGG: {
                "customer_id": [_direct(CLEAN, "customer_id")],
                "total": [
                    _direct(CLEAN, "amount_eur", "AGGREGATION"),
                    _indirect(CLEAN, "customer_id", "GROUP_BY"),
                ],
            }
        },
    )


def run_countries(run: str, minute: int) -> dict[str, Any]:
    return _event(
        run,
        minute,
        [RAW],
        {
            COUNTRIES: {
                "country": [_direct(RAW, "country")],
                "n": [_direct(RAW, "country", "AGGREGATION")],
            }
        },
    )


class Kept:
    """The writes kept so far, looked up as the store does: the latest up to the run's time."""

    def __init__(self) -> None:
        self.writes: list[Write] = []

    def lookup(self, read: Read, event_ms: int) -> Write | None:
        found = [w for w in self.writes if w.dataset == read.dataset and w.event_ms <= event_ms]
        return max(found, key=lambda w: w.event_ms) if found else None

    def latest(self, dataset: str) -> Write | None:
        return self.lookup(Read(dataset), 2**62)

    def run(
        self,
        event: dict[str, Any],
        results: Mapping[DatasetRef, Sequence[RuleResult]] | None = None,
        policy: Upstream = Upstream.WARN,
    ) -> Observed:
        observed = observe(event, results or {}, self.lookup, policy)
        self.writes.extend(observed.writes)
        return observed


def _out(event: Mapping[str, Any]) -> DatasetRef:
    return next(r for r in datasets_of(event) if r.role == "outputs")


def _columns(observed: Observed, dataset: str) -> list[str | None]:
    return sorted(
        (m.column for m in observed.marks.get(f"file:{dataset}", ())), key=lambda c: c or ""
    )


def test_a_failing_column_marks_exactly_the_derived_columns_hop_by_hop() -> None:
    kept = Kept()
    raw = write_raw("raw-1", 0)
    kept.run(raw, {_out(raw): [verdict(NOT_NULL, 3, 10)]})  # 3 nulls: FAILED
    assert kept.latest("file:" + RAW) == Write(
        "file:/lake/raw",
        "raw-1",
        kept.writes[0].event_ms,
        evaluated=True,
        failures=kept.writes[0].failures,
    )
    assert [(f.rule, f.column, f.status) for f in kept.writes[0].failures] == [
        ("customer_id_not_null", "customer_id", "FAILED")
    ]

    clean = kept.run(run_clean("clean-1", 1))
    agg = kept.run(run_agg("agg-1", 2))
    countries = kept.run(run_countries("countries-1", 3))

    assert _columns(clean, CLEAN) == ["customer_id"]  # not amount_eur (only filtered by it)
    assert _columns(agg, AGG) == ["customer_id"]  # not total (only grouped by it)
    assert countries.marks == {}  # the branch reads only healthy columns of raw
    origin = Origin("file:/lake/raw", "customer_id_not_null", "raw-1", None, "customer_id")
    assert agg.marks["file:/lake/agg"] == (
        Mark("customer_id", origin, "file:/lake/clean", "customer_id", blocking=False),
    )
    # outputs with no contract are written, marked, and not evaluated
    assert [(w.dataset, w.evaluated, len(w.marks)) for w in kept.writes[1:]] == [
        ("file:/lake/clean", False, 1),
        ("file:/lake/agg", False, 1),
        ("file:/lake/countries", False, 0),
    ]


def test_a_later_healthy_write_clears_the_marks_on_the_next_runs() -> None:
    kept = Kept()
    raw = write_raw("raw-1", 0)
    kept.run(raw, {_out(raw): [verdict(NOT_NULL, 3, 10)]})
    kept.run(run_clean("clean-1", 1))
    assert _columns(kept.run(run_agg("agg-1", 2)), AGG) == ["customer_id"]

    fixed = write_raw("raw-2", 10)
    kept.run(fixed, {_out(fixed): [verdict(NOT_NULL, 0, 10)]})  # healthy again
    assert kept.run(run_clean("clean-2", 11)).marks == {}
    assert kept.run(run_agg("agg-2", 12)).marks == {}
    latest = kept.latest("file:" + AGG)
    assert latest is not None and latest.run == "agg-2" and latest.healthy


def test_a_run_reads_the_write_before_it_not_a_later_one() -> None:
    kept = Kept()
    raw = write_raw("raw-1", 0)
    kept.run(raw, {_out(raw): [verdict(NOT_NULL, 3, 10)]})
    fixed = write_raw("raw-2", 10)
    kept.run(fixed, {_out(fixed): [verdict(NOT_NULL, 0, 10)]})
    # clean-1 completed at 06:05, before the fix: it read the failing write
    assert _columns(kept.run(run_clean("clean-1", 5)), CLEAN) == ["customer_id"]


def test_a_dataset_level_failure_marks_every_output_derived_from_it_as_a_whole() -> None:
    kept = Kept()
    raw = write_raw("raw-1", 0)
    kept.run(raw, {_out(raw): [verdict(ROWS, 0, 0)]})  # empty: FAILED, dataset-level
    clean = kept.run(run_clean("clean-1", 1))
    agg = kept.run(run_agg("agg-1", 2))
    countries = kept.run(run_countries("countries-1", 3))
    assert _columns(clean, CLEAN) == [None]
    assert _columns(agg, AGG) == [None]  # the whole of clean, hop by hop
    assert _columns(countries, COUNTRIES) == [None]
    mark = agg.marks["file:/lake/agg"][0]
    assert (mark.origin.dataset, mark.origin.rule, mark.via) == (
        "file:/lake/raw",
        "raw_not_empty",
        "file:/lake/clean",
    )


def test_without_column_lineage_the_whole_output_is_marked() -> None:
    kept = Kept()
    raw = write_raw("raw-1", 0)
    kept.run(raw, {_out(raw): [verdict(NOT_NULL, 3, 10)]})
    blind = kept.run(_event("copy-1", 1, [RAW], {"/lake/copy": None}))
    assert _columns(blind, "/lake/copy") == [None]
    mark = blind.marks["file:/lake/copy"][0]
    assert (mark.via, mark.via_column, mark.origin.column) == (
        "file:/lake/raw",
        "customer_id",
        "customer_id",
    )


def test_the_runs_own_input_verdicts_mark_its_outputs_too() -> None:
    kept = Kept()  # raw was never evaluated on its write: the reading run's verdicts say it
    event = run_clean("clean-1", 1)
    read = next(r for r in datasets_of(event) if r.role == "inputs")
    clean = kept.run(event, {read: [verdict(NOT_NULL, 2, 10)]})
    assert _columns(clean, CLEAN) == ["customer_id"]
    assert clean.marks["file:/lake/clean"][0].origin.run == "clean-1"


def test_an_error_is_never_a_pass_and_a_rewrite_is_not_marked_by_its_own_past() -> None:
    kept = Kept()
    raw = write_raw("raw-1", 0)
    kept.run(raw, {_out(raw): [error_result(NOT_NULL, "column not found in dataset")]})
    assert _columns(kept.run(run_clean("clean-1", 1)), CLEAN) == ["customer_id"]
    # a run reading raw and rewriting raw: its own rules judge the new write
    again = kept.run(_event("raw-3", 2, [RAW], {RAW: None}))
    assert again.marks == {}


def test_the_policy_decides_what_a_mark_is_and_the_gate_follows_it() -> None:
    for policy, blocking, code in (("warn", False, 2), ("block", True, 1)):
        kept = Kept()
        raw = write_raw("raw-1", 0)
        kept.run(raw, {_out(raw): [verdict(NOT_NULL, 3, 10)]})
        clean = kept.run(run_clean("clean-1", 1), policy=parse_upstream(policy))
        assert [m.blocking for m in clean.marks["file:/lake/clean"]] == [blocking]
        verdict_ = decide("file:/lake/clean", kept.latest("file:/lake/clean"))
        assert verdict_.code == code  # not evaluated and only warned: 2; marked BLOCK: 1
    kept = Kept()
    raw = write_raw("raw-1", 0)
    kept.run(raw, {_out(raw): [verdict(NOT_NULL, 3, 10)]})
    assert kept.run(run_clean("clean-1", 1), policy=Upstream.OFF).marks == {}


def test_the_gate_decides_from_the_latest_write() -> None:
    kept = Kept()
    assert decide("file:/lake/raw", None).code == 2  # never evaluated
    raw = write_raw("raw-1", 0)
    kept.run(raw, {_out(raw): [verdict(ROWS, 0, 0)]})  # a BLOCK rule failed
    blocked = decide("file:/lake/raw", kept.latest("file:/lake/raw"))
    assert blocked.code == 1
    assert blocked.line.startswith(
        "file:/lake/raw: BLOCK: rule raw_not_empty FAILED (BLOCK) [write of run raw-1 at "
        "2026-11-27T06:00:00+00:00]"
    )
    assert blocked.doc["status"] == "blocked"
    fixed = write_raw("raw-2", 10)
    kept.run(fixed, {_out(fixed): [verdict(ROWS, 5, 5), verdict(NOT_NULL, 1, 5)]})
    healthy = decide("file:/lake/raw", kept.latest("file:/lake/raw"))
    assert healthy.code == 0  # the not-null rule is ALERT by default: named, not blocking
    assert "unhealthy, not blocking" in healthy.line and "customer_id_not_null" in healthy.line
    assert healthy.doc["status"] == "unhealthy"  # not blocking is not healthy
    clean = write_raw("raw-3", 20)
    kept.run(clean, {_out(clean): [verdict(ROWS, 5, 5), verdict(NOT_NULL, 0, 5)]})
    passed = decide("file:/lake/raw", kept.latest("file:/lake/raw"))
    assert (passed.code, passed.doc["status"]) == (0, "healthy")
    assert passed.line.startswith("file:/lake/raw: healthy [write of run raw-3 ")


def test_a_write_with_an_error_and_marks_is_unhealthy_not_blocking() -> None:
    kept = Kept()
    raw = write_raw("raw-1", 0)
    kept.run(raw, {_out(raw): [verdict(NOT_NULL, 3, 10)]})
    event = run_clean("clean-1", 1)
    own = Rule(id="clean.rows", kind=RuleKind.ROW_COUNT, threshold=Threshold(
        Operator.GREATER_THAN, 0), name="clean_rows")  # fmt: skip
    kept.run(event, {_out(event): [error_result(own, "cannot read the dataset")]})
    gate = decide("file:/lake/clean", kept.latest("file:/lake/clean"))
    assert (gate.code, gate.doc["status"]) == (0, "unhealthy")  # ALERT error, a warn mark
    assert "healthy [" not in gate.line.replace("unhealthy", "")
    assert "rule clean_rows ERROR" in gate.line and "marked on customer_id" in gate.line


def test_one_failure_upstream_is_one_mark_per_column_when_the_reader_judges_it_too() -> None:
    kept = Kept()
    raw = write_raw("raw-1", 0)
    kept.run(raw, {_out(raw): [verdict(NOT_NULL, 3, 10)]})
    event = run_clean("clean-1", 1)  # the reading job's contract binds raw too: it fails there
    read = next(r for r in datasets_of(event) if r.role == "inputs")
    clean = kept.run(event, {read: [verdict(NOT_NULL, 3, 10)]})
    marks = clean.marks["file:/lake/clean"]
    assert [(m.column, m.origin.run) for m in marks] == [("customer_id", "raw-1")]
    # a rule of the reader's own, not failed on the write, is a mark of its own
    other = Rule(id="clean.country", kind=RuleKind.NULL_VALUES, columns=["country"],
                 threshold=Threshold(Operator.MUST_BE, 0), name="country_not_null")  # fmt: skip
    event = run_clean("clean-2", 2)
    read = next(r for r in datasets_of(event) if r.role == "inputs")
    again = kept.run(event, {read: [verdict(NOT_NULL, 3, 10), verdict(other, 1, 10)]})
    assert sorted((m.column, m.origin.run) for m in again.marks["file:/lake/clean"]) == [
        ("country", "clean-2"), ("customer_id", "raw-1")
    ]


def test_column_lineage_reads_what_the_listener_writes_and_ignores_the_malformed() -> None:
    facets = {
        "columnLineage": {
            "fields": {
                "a": {"inputFields": [_direct("/x", "A"), {"name": 3}, "junk"]},
                "b": {"inputFields": [{"namespace": "file", "name": "/x", "field": "b"}]},
                "c": "junk",
            },
            "dataset": [_indirect("/y", "k", "JOIN")],
        }
    }
    columns, sources = column_lineage(facets)
    assert columns is not None
    assert [(f.dataset, f.field, f.direct) for f in columns["a"]] == [("file:/x", "A", True)]
    assert [(f.dataset, f.field, f.direct) for f in columns["b"]] == [("file:/x", "b", True)]
    assert "c" not in columns
    assert sources == frozenset({"file:/y"})
    assert column_lineage({}) == (None, frozenset())


def test_a_timed_out_verdict_whose_real_one_follows_marks_nothing_and_is_not_evaluated() -> None:
    kept = Kept()
    event = run_clean("clean-1", 1)
    read, out = datasets_of(event)
    timeout = error_result(NOT_NULL, "evaluation timed out after 300s")
    observed = observe(
        event, {read: [timeout], out: [timeout]}, kept.lookup, provisional=[read, out]
    )
    assert observed.marks == {}
    (write,) = observed.writes
    assert not write.evaluated and write.failures == ()

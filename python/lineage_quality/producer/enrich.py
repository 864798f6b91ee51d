"""Attach quality facets to a raw OpenLineage event. Pure: dict in, new dict out.

Outputs get the facet under `outputs[i].facets`, inputs under `inputs[i].inputFacets` (where
Marquez reads both); every result is also listed in the run's `test` facet (TestRunFacet), so
nothing is lost if a consumer ignores one of the places. Nothing else in the event changes.

What the evaluation's scan measured (results' `measures`) goes beside the assertions as
`dataQualityMetrics`: the spec's InputDatasetFacet on inputs, its DatasetFacet (the same numbers,
with `captureDate`) on outputs (docs/metrics.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from openlineage.client.generated.data_quality_assertions_dataset import (
    Assertion,
    DataQualityAssertionsDatasetFacet,
)
from openlineage.client.generated.test_run import TestExecution

from lineage_quality import rawjson
from lineage_quality.facets import (
    assertions_facet_json,
    dataset_metrics_facet,
    input_metrics_facet,
    test_run_facet,
    to_json_dict,
)
from lineage_quality.facets.upstream import upstream_assertion_json, upstream_test_json
from lineage_quality.lineage.model import Mark
from lineage_quality.measures import DatasetMeasures
from lineage_quality.results import NOT_EVALUATED, RuleResult
from lineage_quality.values.event import Event
from lineage_quality.values.refs import DatasetRef
from lineage_quality.version import PRODUCER

ASSERTIONS_KEY = "dataQualityAssertions"
METRICS_KEY = "dataQualityMetrics"
TEST_RUN_KEY = "test"


# Where our facet goes when another producer's facet already holds the standard key: a facet has
# one `_producer`, so mixing our results into theirs would credit them with ours (or us with
# theirs). Theirs stays untouched; ours go beside it under this prefix.
OWN_PREFIX = "lineageQuality_"


def _place(facets: dict[str, Any], key: str, facet: dict[str, Any]) -> None:
    existing = facets.get(key)
    if existing is None or _ours(existing):
        facets[key] = facet
    else:
        facets[OWN_PREFIX + key] = facet


def _ours(facet: Any) -> bool:
    return isinstance(facet, Mapping) and facet.get("_producer") == PRODUCER


def _measures(results: Sequence[RuleResult]) -> DatasetMeasures | None:
    """The numbers of the one scan the dataset's results came from. A result made afresh after
    it (a history rule judged against the past, or skipped for want of it) carries none and
    changes nothing; when the data could not be judged (changed while read, a timeout, a dead
    JVM) no result carries any; two scans' numbers are never mixed."""
    found = {id(r.measures): r.measures for r in results if r.measures is not None}
    if len(found) != 1:
        return None
    return next(iter(found.values()))


def _metrics_json(
    ref: DatasetRef, measures: DatasetMeasures, event: Mapping[str, Any]
) -> dict[str, Any]:
    if ref.role == "inputs":
        return to_json_dict(input_metrics_facet(measures))
    return to_json_dict(dataset_metrics_facet(measures, Event.of(event).event_time))


# What one event may gain (our facets, as JSON bytes), whatever it lists: without a bound, a 28 KB
# event listing a profiled 2,000-column dataset 500 times grew to 67 MB (issue 44). A dataset's
# facets past it are left out, and an ERROR assertion there says so (docs/reliability.md).
MAX_ADDED_BYTES = 8 * 1024 * 1024
LEFT_OUT = "facetsLeftOut"  # the assertion that stands for facets past the bound


def enrich(
    event: Mapping[str, Any],
    results: Mapping[DatasetRef, Sequence[RuleResult]],
    max_added_bytes: int = MAX_ADDED_BYTES,
    upstream: Mapping[DatasetRef, Sequence[Mark]] | None = None,
) -> dict[str, Any]:
    """A copy of `event` with the results attached; `event` itself is not modified. At most
    `max_added_bytes` of facets are added (each dataset's assertions, metrics and its share of
    the run's `test` facet count); a dataset whose facets would pass it gets one ERROR assertion
    naming what was left out instead. `upstream`: the marks of outputs derived from unhealthy
    data (lineage/propagate.py), each an `upstreamQuality` assertion after the dataset's own."""
    upstream = upstream or {}
    # Copied along the paths we write only (the event, its run and their facet objects, the
    # dataset lists and the datasets we enrich): nothing of the caller's is modified, nothing else
    # is copied (a deep copy cost a third of enrich, and failed on events nested ~500 deep).
    out: dict[str, Any] = dict(event)
    copied_roles: set[str] = set()
    run_tests: list[tuple[str, RuleResult]] = []
    budget = max_added_bytes
    left_out: list[str] = []
    unmarked = 0  # datasets left out once even their markers no longer fit

    def facets_of(ref: DatasetRef) -> dict[str, Any]:
        """The dataset's facet object in `out`, copied along its path."""
        if ref.role not in copied_roles:
            out[ref.role] = list(out[ref.role])
            copied_roles.add(ref.role)
        dataset = out[ref.role][ref.index] = dict(out[ref.role][ref.index])
        where = "inputFacets" if ref.role == "inputs" else "facets"
        facets = dataset.get(where)
        facets = dataset[where] = dict(facets) if isinstance(facets, Mapping) else {}
        return facets

    mark_tests: list[dict[str, Any]] = []
    for ref in dict.fromkeys([*results, *upstream]):
        rule_results = results.get(ref, ())
        marks = upstream.get(ref, ())
        if not rule_results and not marks:
            continue
        if not marks and all(r.skip_reason in NOT_EVALUATED for r in rule_results):
            # Nothing was evaluated on this output: no dataset facet claims anything about it.
            run_tests.extend((ref.key, r) for r in rule_results)
            continue
        # marks on an output nothing was evaluated on: the marks alone make its facet
        nothing = all(r.skip_reason in NOT_EVALUATED for r in rule_results)
        shown, unshown = ([], list(rule_results)) if nothing else (list(rule_results), [])
        facet = assertions_facet_json(shown)
        facet["assertions"].extend(upstream_assertion_json(m) for m in marks)
        added = {ASSERTIONS_KEY: facet}
        measures = _measures(shown)
        if measures is not None:
            added[METRICS_KEY] = _metrics_json(ref, measures, event)
        # the run's test facet repeats each assertion: about the assertions' size again
        size = sum(
            len(rawjson.dumps(f)) * (2 if key == ASSERTIONS_KEY else 1) for key, f in added.items()
        )
        if size <= budget:
            budget -= size
            facets = facets_of(ref)
            for key, value in added.items():
                _place(facets, key, value)
            run_tests.extend((ref.key, r) for r in (*shown, *unshown))
            mark_tests.extend(upstream_test_json(m, ref.key) for m in marks)
            continue
        message = _left_out_message(ref, len(shown) + len(marks), size, max_added_bytes)
        marker = _left_out_facet(message)
        cost = 2 * len(rawjson.dumps(marker))  # the markers count too: the dataset's, the run's
        if cost <= budget:
            budget -= cost
            left_out.append(message)
            _place(facets_of(ref), ASSERTIONS_KEY, marker)
        else:  # past even that: counted in one entry of the run's test facet
            unmarked += 1
    if unmarked:
        left_out.append(
            f"the facets of {unmarked} more dataset(s) were left out, unmarked: this event's "
            f"facets reached the bound of {max_added_bytes} bytes (--max-added-bytes)"
        )
    if run_tests or left_out or mark_tests:
        run = out.get("run")
        run = out["run"] = dict(run) if isinstance(run, Mapping) else {}
        run_facets = run.get("facets")
        run_facets = run["facets"] = dict(run_facets) if isinstance(run_facets, Mapping) else {}
        tests = to_json_dict(test_run_facet(run_tests))
        tests["tests"].extend(mark_tests)
        tests["tests"].extend(_left_out_test(message) for message in left_out)
        _place(run_facets, TEST_RUN_KEY, tests)
    return out


def _left_out_message(ref: DatasetRef, assertions: int, size: int, bound: int) -> str:
    return (
        f"{assertions} assertion(s) and the metrics of {ref.role} {ref.key} (about {size} "
        f"bytes) were left out: this event's facets reached the bound of {bound} bytes "
        "(--max-added-bytes)"
    )


def _left_out_facet(message: str) -> dict[str, Any]:
    facet = to_json_dict(DataQualityAssertionsDatasetFacet(assertions=[], producer=PRODUCER))
    facet["assertions"] = [
        to_json_dict(
            Assertion(
                assertion=LEFT_OUT,
                success=False,
                params={"status": "ERROR", "error": message},
            )
        )
    ]
    return facet


def _left_out_test(message: str) -> dict[str, Any]:
    return to_json_dict(
        TestExecution(
            name=LEFT_OUT,
            status="fail",
            type=LEFT_OUT,
            params={"status": "ERROR", "error": message},
        )
    )

import io

from lineage_quality.engine import verdict
from lineage_quality.kinds import RuleKind
from lineage_quality.report import fundamental, to_json, to_table
from lineage_quality.results import RuleResult, Status, error_result, skipped_result
from lineage_quality.rules import Operator, Rule, Threshold

Z = Threshold(Operator.MUST_BE, 0)


def test_table_shows_the_most_fundamental_failure_and_json_every_rule() -> None:
    schema = Rule(
        id="schema_a",
        kind=RuleKind.COLUMN_TYPE,
        columns=["a"],
        threshold=Z,
        expected_type="integer",
    )
    nn = Rule(id="not_null_a", kind=RuleKind.NULL_VALUES, columns=["a"], threshold=Z)
    rng = Rule(id="range_a", kind=RuleKind.VALUE_RANGE, columns=["a"], threshold=Z, min_value=0)
    ok = Rule(id="not_null_b", kind=RuleKind.NULL_VALUES, columns=["b"], threshold=Z)
    rows = Rule(id="rows", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0))
    results = [
        skipped_result(rng, "TYPE_MISMATCH"),
        verdict(nn, 2, 10),
        RuleResult(
            rule=schema,
            status=Status.FAILED,
            code="TYPE_MISMATCH",
            message="expected integer, found double",
            observed="double",
        ),
        verdict(ok, 0, 10),
        error_result(rows, "dataset could not be read"),
    ]
    (a, a_fail, _), (b, b_fail, b_count), (ds, ds_fail, _) = fundamental(results)
    assert (a, b, ds) == ("a", "b", "(dataset)")
    assert a_fail is not None and a_fail.rule.id == "schema_a"  # type before not-null
    assert b_fail is None and b_count == 1
    assert ds_fail is not None and ds_fail.status is Status.ERROR
    table = to_table("data", results)
    assert "TYPE_MISMATCH: expected integer, found double (1 dependent rule(s) skipped)" in table
    assert "data: 5 rules, 1 passed, 3 failed, 1 skipped" in table
    report = to_json("data", results)
    statuses = {r["rule_id"]: (r["status"], r["skip_reason"], r["code"]) for r in report["results"]}
    assert statuses == {
        "range_a": ("SKIPPED", "TYPE_MISMATCH", None),
        "not_null_a": ("FAILED", None, None),
        "schema_a": ("FAILED", None, "TYPE_MISMATCH"),
        "not_null_b": ("PASSED", None, None),
        "rows": ("FAILED", None, "EVALUATION_ERROR"),  # an error is never a pass
    }


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_is_drawn_and_cleared() -> None:
    from lineage_quality.cli.check import Progress

    class Tracker:
        def getActiveStageIds(self) -> list[int]:
            return [0]

        def getStageInfo(self, _: int) -> object:
            return type("Info", (), {"numCompletedTasks": 3, "numTasks": 8})()

    spark = type(
        "S", (), {"sparkContext": type("C", (), {"statusTracker": lambda self: Tracker()})()}
    )()
    stream = _Tty()
    import time

    with Progress(spark, "checking 4 rules on x", stream):
        deadline = time.monotonic() + 5
        while "tasks 3/8" not in stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
    text = stream.getvalue()
    assert "checking 4 rules on x tasks 3/8" in text
    assert text.endswith("\r\x1b[2K")  # the line is cleared at the end


def test_a_field_whose_rules_are_all_skipped_is_not_shown_as_passed() -> None:
    inactive = Rule(id="n", kind=RuleKind.NULL_VALUES, columns=["c"], threshold=Z, active=False)
    text = to_table("d", [skipped_result(inactive, "INACTIVE", "is_active: false")])
    (row,) = [line for line in text.splitlines() if line.startswith("c ")]
    assert row.split()[:2] == ["c", "SKIPPED"]
    assert row.endswith("is_active: false")

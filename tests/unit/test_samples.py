"""Failing-row samples without Spark: masking, the contract's policy, check's JSON and table,
the history store (lineage_quality.samples, contracts/odcs_samples.py, history/samples.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from lineage_quality.contracts.odcs import parse_odcs
from lineage_quality.errors import ContractError
from lineage_quality.history.judge import judge_and_record
from lineage_quality.history.samples import MAX_SAMPLE_ROWS
from lineage_quality.history.store import open_history
from lineage_quality.kinds import RuleKind
from lineage_quality.report import to_json, to_table
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.samples import (
    HASH_PREFIX,
    MAX_TEXT,
    REDACTED,
    Masking,
    SamplePolicy,
    Samples,
    Sampling,
    classified,
    sample_key,
)

RAW = "jane.doe@secret.example"
NOW_MS = int(time.time() * 1000)

CONTRACT = """
apiVersion: v3.0.2
kind: DataContract
id: people
version: 1.0.0
status: active
customProperties:
  - property: lineageQuality.samples.rows
    value: 3
schema:
  - name: people
    customProperties:
      - property: lineageQuality.samples.facets
        value: true
    properties:
      - name: id
        primaryKey: true
      - name: email
        classification: restricted
        quality:
          - metric: invalidValues
            arguments: {pattern: '^[a-z]+@[a-z]+\\.com$'}
            mustBe: 0
            customProperties:
              - property: lineageQuality.samples.rows
                value: 2
      - name: phone
        tags: [PII]
      - name: ssn
        customProperties:
          - property: pii
            value: "true"
          - property: lineageQuality.samples
            value: redact
      - name: nickname
        classification: confidential
        customProperties:
          - property: lineageQuality.samples
            value: show
      - name: city
        classification: public
"""


def test_the_contract_says_which_columns_are_masked_the_keys_and_the_rows() -> None:
    (bound,) = parse_odcs(CONTRACT, "people.yaml")
    policy = bound.samples
    assert policy.keys == ("id",)
    assert dict(policy.masks) == {
        "email": Masking.HASH,
        "phone": Masking.HASH,
        "ssn": Masking.REDACT,
        "nickname": Masking.SHOW,  # the explicit opt-in
    }
    assert policy.masking("City") == Masking.SHOW
    assert policy.rows == 3 and policy.facets is True
    (email_rule,) = [r for r in bound.rules if r.column == "email" and r.pattern]
    assert policy.rows_of(email_rule.id, 5) == 2
    assert policy.rows_of("other", 5) == 3


@pytest.mark.parametrize(
    ("was", "now", "said"),
    [
        ("value: redact", "value: peek", "lineageQuality.samples must be show, hash or redact"),
        ("value: 3", "value: many", "lineageQuality.samples.rows must be a whole number"),
        ("value: 2", "value: 101", "lineageQuality.samples.rows must be a whole number"),
        ("value: true", "value: maybe", "lineageQuality.samples.facets must be true or false"),
    ],
)
def test_a_value_it_cannot_read_names_its_key(was: str, now: str, said: str) -> None:
    with pytest.raises(ContractError) as err:
        parse_odcs(CONTRACT.replace(was, now, 1), "people.yaml")
    assert said in str(err.value) and "customProperties" in str(err.value)


def test_classifications_that_mask() -> None:
    assert classified("restricted") and classified("Confidential") and classified("pii")
    assert not classified("public") and not classified(None) and not classified("internal")


def test_masking_keeps_equal_values_equal_and_the_raw_value_nowhere() -> None:
    policy = SamplePolicy(masks=(("email", Masking.HASH), ("ssn", Masking.REDACT)))
    sampling = Sampling(policy, key=b"k" * 32)
    first, again = sampling.shown("EMAIL", RAW), sampling.shown("email", RAW)
    assert first == again and first is not None and first.startswith(HASH_PREFIX)
    assert RAW not in first and sampling.shown("email", "other") != first
    assert Sampling(policy, key=b"j" * 32).shown("email", RAW) != first  # keyed
    assert sampling.shown("ssn", "123-45-6789") == REDACTED
    long = sampling.shown("plain", "x" * 500)
    assert long is not None and len(long) == MAX_TEXT and long.endswith("…")
    assert sampling.shown("plain", None) is None
    assert "key" not in repr(sampling).replace("keys", "")  # the key never printed


def test_merged_policies_mask_what_any_contract_masks() -> None:
    a = SamplePolicy(masks=(("email", Masking.SHOW),), rows=5, facets=True)
    b = SamplePolicy(masks=(("email", Masking.HASH), ("ssn", Masking.REDACT)), rows=2)
    c = SamplePolicy(masks=(("ssn", Masking.HASH),), facets=False, keys=("id",))
    merged = SamplePolicy.merged([a, b, c])
    assert merged.masking("email") == Masking.HASH
    assert merged.masking("ssn") == Masking.REDACT
    assert merged.rows == 2 and merged.facets is False and merged.keys == ("id",)


def test_the_key_is_kept_and_read_back(tmp_path: Path) -> None:
    where = tmp_path / "history.db.sample-key"
    key = sample_key(where)
    assert len(key) == 32 and sample_key(where) == key
    assert where.stat().st_mode & 0o077 == 0  # the owner's alone


def failed(rule_id: str = "email_pattern") -> RuleResult:
    rule = Rule(
        id=rule_id, kind=RuleKind.INVALID_VALUES, columns=("email",), pattern="^a$",
        threshold=Threshold(Operator.MUST_BE, 0),
    )  # fmt: skip
    samples = Samples(
        columns=("id", "email"),
        rows=(("2", "hmac:00ff"), ("3", "bad\x1b[31mvalue")),
        masked=("email",),
    )
    return RuleResult(rule, Status.FAILED, actual=2, failing_rows=2, row_count=9, samples=samples)


def test_check_json_and_table_show_the_samples_inert() -> None:
    result = failed()
    body = to_json("/data/people", [result])["results"][0]
    assert body["samples"] == {
        "columns": ["id", "email"],
        "rows": [{"id": "2", "email": "hmac:00ff"}, {"id": "3", "email": "bad\x1b[31mvalue"}],
        "masked": ["email"],
    }
    table = to_table("/data/people", [result])
    assert "failing rows of email_pattern:" in table
    assert "  id=2, email=hmac:00ff" in table
    assert "\x1b" not in table and "bad\\x1b[31mvalue" in table


def test_the_history_store_keeps_samples_with_their_run_and_expires_them(tmp_path: Path) -> None:
    store = open_history(tmp_path / "history.db")
    try:
        judge_and_record(store, "file:/data/people", "run-1", NOW_MS, [failed()])
        kept = store.samples_of_run("file:/data/people", "run-1")
        assert kept == {"email_pattern": failed().samples}
        assert store.samples_of_run("file:/data/people", "run-2") == {}
        # the run's values gone (a bound, the retention): its samples go with them
        with store._transaction() as cur:
            cur.execute("DELETE FROM lq_history")
        judge_and_record(store, "file:/data/other", "run-3", NOW_MS, [failed("x")])
        assert store.samples_of_run("file:/data/people", "run-1") == {}
        assert store.samples_of_run("file:/data/other", "run-3") != {}
    finally:
        store.close()
    assert MAX_SAMPLE_ROWS > 0


def test_a_store_without_samples_reads_as_none(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.db"
    open_history(path).close()
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE IF EXISTS lq_samples")
    store = open_history(path, read_only=True)
    try:
        assert store.samples_of_run("file:/x", "run") == {}
    finally:
        store.close()


def test_samples_round_trip_through_their_json() -> None:
    samples = failed().samples
    assert samples is not None
    assert Samples.from_json(json.loads(samples.text())) == samples


def test_facets_carry_samples_only_when_asked_and_count_their_bytes() -> None:
    import attrs

    from lineage_quality.facets.assertions import assertion_json
    from lineage_quality.producer.enrich import LEFT_OUT, enrich
    from lineage_quality.values.refs import DatasetRef

    quiet = failed()
    assert "samples" not in assertion_json(quiet)["params"]  # default off: events travel far
    assert quiet.samples is not None
    loud = attrs.evolve(quiet, samples=attrs.evolve(quiet.samples, facets=True))
    assert assertion_json(loud)["params"]["samples"]["rows"][0] == {"id": "2", "email": "hmac:00ff"}
    event = {"eventType": "COMPLETE", "outputs": [{"namespace": "file", "name": "/p"}]}
    ref = DatasetRef("outputs", 0, "file", "/p")
    fits = len(json.dumps(enrich(event, {ref: [quiet]}))) * 2  # room for the facets alone
    kept = enrich(event, {ref: [quiet]}, max_added_bytes=fits)
    assert "dataQualityAssertions" in kept["outputs"][0]["facets"]
    many = Samples(("id", "email"), tuple((str(i), "hmac:" + "0" * 16) for i in range(100)))
    heavy = attrs.evolve(quiet, samples=attrs.evolve(many, facets=True))
    left = enrich(event, {ref: [heavy]}, max_added_bytes=fits)
    facet = left["outputs"][0]["facets"]["dataQualityAssertions"]
    assert [a["assertion"] for a in facet["assertions"]] == [LEFT_OUT]


def test_alerts_carry_a_count_and_a_link_never_values() -> None:
    from lineage_quality.producer.alerts import alerts_for, slack_message
    from lineage_quality.values.refs import DatasetRef

    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-11-22T06:00:00.000Z",
        "run": {"runId": "run-1"},
        "job": {"namespace": "ns", "name": "job.write"},
    }
    ref = DatasetRef("outputs", 0, "file", "/data/people")
    result = failed()
    (alert,) = alerts_for(event, {ref: [result]}, 0, None, "https://q.example/")
    assert alert.payload["failed"][0]["samples"] == 2
    assert alert.payload["view"] == "https://q.example/datasets/file%3A%2Fdata%2Fpeople"
    text = json.dumps(alert.payload) + json.dumps(slack_message(alert.payload))
    assert "2 failing row(s) sampled" in text
    assert "hmac:00ff" not in text and "value" not in text.replace('"view"', "")


def test_the_run_page_of_the_view_shows_the_kept_samples_inert(tmp_path: Path) -> None:
    import attrs

    from lineage_quality.values.refs import DatasetRef
    from lineage_quality.view import data, pages
    from lineage_quality.view.data import Links
    from lineage_quality.view.open import open_stores
    from view_store import Filler, event

    where = tmp_path / "history.db"
    filler = Filler(where)
    ev = event("run-7", NOW_MS, "ingest", [], {"/lake/people": ["id", "email"]})
    result = failed()
    assert result.samples is not None
    hostile = attrs.evolve(result.samples, rows=(("<script>x</script>", "hmac:00ff"),))
    shown = [attrs.evolve(result, samples=hostile)]
    judged = judge_and_record(filler.history, "file:/lake/people", "run-7", NOW_MS, shown)

    filler.keeper.keep(ev, {DatasetRef("outputs", 0, "file", "/lake/people"): judged})
    filler.close()
    stores = open_stores(where, Links(None, None))
    doc = data.run(stores, "run-7")
    assert doc is not None
    (wrote,) = doc["wrote"]
    assert wrote["samples"] == [
        {"rule": "email_pattern", "columns": ["id", "email"],
         "rows": [{"id": "<script>x</script>", "email": "hmac:00ff"}], "masked": ["email"]}
    ]  # fmt: skip
    page = pages.run_page(doc)
    assert "failing rows of email_pattern" in page and "(masked: email)" in page
    assert "<td>&lt;script&gt;x&lt;/script&gt;</td><td>hmac:00ff</td>" in page
    assert "<script>" not in page


def test_serve_flags_set_the_sampling(tmp_path: Path) -> None:
    from lineage_quality.cli.main import build_parser
    from lineage_quality.cli.serve import _sampling, _settings

    key_file = tmp_path / "k"
    argv = ["serve", "--contracts", "c", "--spool", str(tmp_path / "spool.db"), "--sample-rows",
            "3", "--facet-samples", "--sample-key-file", str(key_file)]  # fmt: skip
    args = build_parser().parse_args(argv)
    settings = _settings(args, None, 0)
    assert settings.evaluation.sample_rows == 3 and settings.evaluation.facet_samples
    sampling = _sampling(args, settings)
    assert (sampling.rows, sampling.facets) == (3, True)
    assert key_file.read_text().strip() == sampling.key.hex()
    plain = build_parser().parse_args(["serve", "--contracts", "c", "--spool", str(tmp_path / "s")])
    defaults = _settings(plain, None, 0)
    assert defaults.evaluation.sample_rows == 5 and not defaults.evaluation.facet_samples
    assert _sampling(plain, defaults).key == sample_key(tmp_path / ("history.db" + ".sample-key"))
    with pytest.raises(Exception, match="sample_rows"):
        _settings(build_parser().parse_args([*argv[:5], "--sample-rows", "101"]), None, 0)


def test_the_schema_rules_json_masks_the_fields_of_rules_tagged_pii() -> None:
    from lineage_quality.contracts.schema_json import parse_schema_json

    def entry(name: str, column: str, tags: list[str]) -> dict[str, object]:
        target = {"database": "d", "table": "people", "column": column}
        return {"name": name, "type": "NOT_NULL", "target": {"entities": [target]},
                "parameters": {}, "tags": tags}  # fmt: skip

    text = json.dumps({"rules": [entry("r1", "email", ["PII"]), entry("r2", "city", ["geo"])]})
    bound = parse_schema_json(text, "rules.json")
    assert dict(bound.samples.masks) == {"email": Masking.HASH}

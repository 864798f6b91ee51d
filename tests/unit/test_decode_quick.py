"""Kafka in's quick parse (receiver/body.py `decode_quick`, orjson): it refuses what `decode`
refuses, with the same message, and gives the same facts; what goes to the spool is parsed
again as written (`Envelope.exact_form`), so a worker writes its numbers back unchanged."""

from __future__ import annotations

import json

import pytest

from lineage_quality import rawjson
from lineage_quality.producer.envelope import Envelope
from lineage_quality.producer.receiver.body import RejectedError, decode, decode_quick

LIMIT = 1 << 20


def _event(**extra: object) -> dict[str, object]:
    return {
        "eventType": "START", "eventTime": "2026-12-06T00:00:00Z", "producer": "t",
        "run": {"runId": "00000000-0000-4000-8000-000000000001"},
        "job": {"namespace": "n", "name": "j"}, **extra,
    }  # fmt: skip


def _nested(depth: int) -> bytes:
    body = json.dumps(_event(inputs=[]))[:-1]
    return (body + ', "x": ' + "[" * depth + "]" * depth + "}").encode()


BODIES = [
    json.dumps(_event()).encode(),
    json.dumps(_event(run={"runId": "r", "facets": {"n": {"big": 2**70, "f": 1.5}}})).encode(),
    b'{"eventType": "START", "run": {"runId": "r"}, "job": {"namespace": "n", "name": "j"},'
    b' "eventTime": "2026-12-06T00:00:00Z", "producer": "t", "x": NaN}',
    b'{"eventType": "START", "run": {"runId": "r"}, "job": {"namespace": "n", "name": "j"},'
    b' "eventTime": "2026-12-06T00:00:00Z", "producer": "t", "x": "\\ud800"}',
    b'{"eventType": "START", "run": {"runId": "r"}, "job": {"namespace": "n", "name": "j"},'
    b' "eventTime": "2026-12-06T00:00:00Z", "producer": "t", "x": 1e400}',
    b"\xef\xbb\xbf" + json.dumps(_event()).encode(),
    json.dumps(_event(eventType="BEGIN")).encode(),
    json.dumps({"run": {"runId": 7}, "job": {"namespace": "n", "name": "j"}}).encode(),
    b'{"eventType": "START", "run": {"runId": "r"}, "job": {"namespace": "n", "name": "\xff"}}',
    b"[1, 2]",
    b"not json",
    _nested(20),
    _nested(890),  # the quick parse's bound: as deep as it goes
    _nested(990),  # deeper than Python's recursion lets `decode` go, shallower than orjson's
    _nested(1100),
]


def _outcome(call: object) -> object:
    try:
        text, tree = call()[:2]  # type: ignore[operator]
    except RejectedError as exc:
        return ("refused", exc.status, str(exc))
    envelope = Envelope.of(text, tree)
    return ("taken", text, envelope.event_type, envelope.run_ids, envelope.lane)


@pytest.mark.parametrize("body", BODIES, ids=range(len(BODIES)))
def test_the_quick_parse_takes_and_refuses_what_decode_does(body: bytes) -> None:
    assert _outcome(lambda: decode_quick(body, LIMIT)) == _outcome(
        lambda: decode(body, None, LIMIT)
    )


def test_the_quick_parse_is_orjsons_and_exact_form_parses_it_again_as_written() -> None:
    body = (
        b'{"eventType": "COMPLETE", "eventTime": "2026-12-06T00:00:00Z", "producer": "t",'
        b' "run": {"runId": "r", "facets": {"n": {"f": 1.50, "e": 1E3, "big": 123456789012345678901234567890}}},'  # noqa: E501
        b' "job": {"namespace": "n", "name": "j"}}'
    )
    text, tree, exact = decode_quick(body, LIMIT)
    assert not exact and tree["run"]["facets"]["n"]["f"] == 1.5  # orjson's plain numbers
    quick = Envelope.of(text, tree, exact)
    kept = quick.exact_form()
    assert kept is not quick and kept.exact and kept.lane == quick.lane
    # written back as received: 1.50, 1E3 and the 30 digits unchanged
    assert rawjson.dumps(kept.tree) == rawjson.dumps(rawjson.loads(body.decode()))
    assert "1.50" in rawjson.dumps(kept.tree) and "1.50" not in rawjson.dumps(quick.tree)
    assert kept.exact_form() is kept


def test_a_wide_event_is_parsed_as_written_at_once() -> None:
    columns = {f"c{i}": {"inputFields": [{"namespace": "n", "name": "t", "field": f"c{i}"}]}
               for i in range(400)}  # fmt: skip
    body = json.dumps(_event(outputs=[{"namespace": "n", "name": "o", "facets": {
        "columnLineage": {"fields": columns}}}])).encode()  # fmt: skip
    assert decode_quick(body, LIMIT)[2]  # over 900 containers: `decode` alone

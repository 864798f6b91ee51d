"""Property: whatever the body, the receiver answers (201 or a 4xx, never a crash or a 5xx), keeps
serving, and forwards every event it answered 201 to, unchanged. Over 10,000 generated bodies on
real HTTP (kept-alive connections), valid OpenLineage events mixed in with malformed JSON, wrong
content types, oversized and gzip bodies, missing `run`/`job`, unknown event types and unknown
(custom) facets, which are valid and must pass."""

from __future__ import annotations

import gzip
import json
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from faultkit import Sender, record_fault, tmpfs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openlineage.client.transport import Transport

from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.events import EVENT_TYPES
from lineage_quality.producer.settings import Settings

MAX_BODY = 64 * 1024
FAMILIES = 5  # per example, 8 or 9 bodies each
EXAMPLES = 250
JSON = {"Content-Type": "application/json"}


class RecordingTransport(Transport):
    kind = "recording"

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._changed = threading.Condition()

    def emit(self, event: Any) -> None:
        with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    def wait_count(self, n: int, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: len(self.events) >= n, timeout)


@pytest.fixture(scope="module")
def producer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Producer]:
    folder = tmp_path_factory.mktemp("property") / "spool"
    with tmpfs(folder, "64m"):  # no fsync cost where we may mount; a plain folder otherwise
        transport = RecordingTransport()
        producer = Producer(
            Evaluator([]),
            Forwarder(transport),
            Spool(folder / "spool.db", Settings.of(spool_reserve_bytes=0)),
            Settings.of(port=0, max_body=MAX_BODY),
        )
        producer.start()
        yield producer
        producer.stop()
        producer.spool.close()


# -- strategies ---------------------------------------------------------------------------------

leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
value = st.recursive(
    leaf,
    lambda c: st.lists(c, max_size=2) | st.dictionaries(st.text(max_size=6), c, max_size=2),
    max_leaves=3,
)
facet = st.dictionaries(st.text(max_size=8), value, max_size=2)  # unknown facets are valid
facets = st.dictionaries(st.text(min_size=1, max_size=10), facet, max_size=2)
name = st.text(min_size=1, max_size=16)
times = st.sampled_from(
    ["2026-11-22T06:00:00Z", "2026-11-22T06:00:00.123Z", "2026-11-22T08:00:00.123456+02:00"]
)


@st.composite
def datasets(draw: st.DrawFn, extra: str) -> dict[str, Any]:
    ds: dict[str, Any] = {"namespace": draw(name), "name": draw(name)}
    if draw(st.booleans()):
        ds["facets"] = draw(facets)
    if draw(st.booleans()):
        ds[extra] = draw(facets)
    return ds


@st.composite
def valid_events(draw: st.DrawFn) -> dict[str, Any]:
    event: dict[str, Any] = {
        "eventTime": draw(times),
        "producer": draw(name),
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }
    job = {"namespace": draw(name), "name": draw(name), "facets": draw(facets)}
    kind = draw(st.sampled_from(["run", "run", "run", "job", "dataset"]))
    if kind == "dataset":
        event["dataset"] = {"namespace": draw(name), "name": draw(name), "facets": draw(facets)}
        return event
    event["job"] = job
    if kind == "run":
        event["run"] = {"runId": str(draw(st.uuids())), "facets": draw(facets)}
        event_type = draw(st.sampled_from([None, *sorted(EVENT_TYPES)]))
        if event_type:
            event["eventType"] = event_type
    event["inputs"] = draw(st.lists(datasets("inputFacets"), max_size=2))
    event["outputs"] = draw(st.lists(datasets("outputFacets"), max_size=2))
    return event


def _broken(event: dict[str, Any], how: int, junk: str) -> dict[str, Any]:
    """A copy of a valid event with one thing broken."""
    event = json.loads(json.dumps(event))
    if "run" not in event or how == 0:
        del event[["eventTime", "producer"][how % 2]]
    elif how == 1:
        del event["job"]
    elif how == 2:
        event["eventType"] = junk if junk not in EVENT_TYPES else junk + "?"
    elif how == 3:
        event["eventTime"] = junk
    elif how == 4:
        event["run"] = [{}, {"runId": 5}, [], "run", None][len(junk) % 5]
    elif how == 5:
        event["inputs"] = [{}, "x", 3, [1], [{"name": "n"}]][len(junk) % 5]
    elif how == 6:
        event["run"]["facets"] = {"f": [1, "x", [], True][len(junk) % 4]}
    elif how == 7:
        event["job"] = [{"namespace": "n"}, {"name": ""}, "job", 7][len(junk) % 4]
    elif how == 8:
        event["schemaURL"] = [1, [], {}][len(junk) % 3]
    else:
        del event["run"]["runId"]
    return event


GZIP_BOMB = gzip.compress(b"{" + b" " * (4 * MAX_BODY) + b"}")
GZ = {**JSON, "Content-Encoding": "gzip"}
Case = tuple[bytes, dict[str, str], set[int], "dict[str, Any] | None"]


@st.composite
def family(draw: st.DrawFn) -> list[Case]:
    """Bodies around one valid event: (body, headers, statuses it may get, the event when it
    must be taken)."""
    event = draw(valid_events())
    body = json.dumps(event).encode()
    packed = gzip.compress(body)
    ctype = draw(st.sampled_from(["text/plain", "application/xml", "x/y", "multipart/form"]))
    junk = draw(st.text(max_size=8))
    out: list[Case] = [
        (body, JSON, {201}, event),
        (packed, GZ, {201}, event),
        (body, {"Content-Type": ctype}, {415}, None),
        (body[: draw(st.integers(0, len(body) - 1))], JSON, {400}, None),
        (packed[: draw(st.integers(0, len(packed) - 1))], GZ, {400}, None),
        (json.dumps(_broken(event, draw(st.integers(0, 9)), junk)).encode(), JSON, {400}, None),
        (draw(st.binary(max_size=40)), JSON, {400, 201}, None),
        (json.dumps(draw(value)).encode(), JSON, {400, 201}, None),
    ]
    rare = draw(st.integers(0, 19))
    if rare == 0:
        out.append((b"[" * (MAX_BODY + 1), JSON, {413}, None))
    elif rare == 1:
        out.append((GZIP_BOMB, GZ, {413}, None))
    elif rare == 2:
        out.append((b'{"run": NaN}', JSON, {400}, None))
    return out


def canonical(event: Any) -> str:
    return json.dumps(event, sort_keys=True)


def test_no_body_crashes_the_receiver_and_every_accepted_event_is_forwarded(
    producer: Producer,
) -> None:
    transport = producer.forwarder.transport
    assert isinstance(transport, RecordingTransport)
    sender = Sender(producer.url)
    accepted: Counter[str] = Counter()
    statuses: Counter[int] = Counter()
    must_pass = 0

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.lists(family(), min_size=FAMILIES, max_size=FAMILIES))
    def throw(families: list[list[Case]]) -> None:
        nonlocal must_pass
        for body, headers, allowed, event in (case for f in families for case in f):
            status, payload = sender.post_raw(body, headers)
            statuses[status] += 1
            assert status in allowed, (status, payload[:200], body[:200])
            if status == 201:
                text = gzip.decompress(body) if "Content-Encoding" in headers else body
                accepted[canonical(json.loads(text))] += 1
            else:
                assert json.loads(payload)["error"]  # a clear message
            must_pass += event is not None

    try:
        throw()
        total = sum(statuses.values())
        assert total >= 10_000
        assert transport.wait_count(sum(accepted.values()), timeout=120)
        assert producer.spool.wait_empty(timeout=60)
        forwarded = Counter(canonical(e) for e in transport.events)
    finally:
        sender.close()
    assert forwarded == accepted
    assert statuses[201] >= must_pass > 2000
    lost = record_fault(
        "10,000+ generated bodies (property)",
        sent=total,
        accepted=sum(accepted.values()),
        forwarded=sum(forwarded.values()),
        valid_generated=must_pass,
        rejected_4xx=total - statuses[201],
        statuses=dict(sorted(statuses.items())),
    )
    assert lost == 0

"""`read_facts`: what Kafka in needs of a run event to relay it -- that it is well-formed, its
type, run ids, lane and Kafka key -- read straight from the message's bytes by msgspec into a
skeleton of typed fields; the rest of the event is checked as JSON and skipped, never built.
For the listener's events that is ~3 us against ~25 for building the whole event (orjson) and
reading the facts from it (measured in tests/unit/test_skeleton.py's neighbourhood:
docs/producer.md, "Kafka in").

Only a quick yes. Whatever the skeleton does not take -- not a run event, a field of another
type than the listener writes, anything `check_event` refuses, a facet of the run with a `run`,
`job` or `root` field of another shape than the `parent` facet's -- gives None, and the caller
reads the event the full way (receiver/body.py `decode_quick`, whose answer is the one given).
So an event passes here only when the full way takes it too, and with the same facts
(tests/unit/test_skeleton.py compares both ways on the listener's events and on hostile ones).
The event itself is parsed later only if something asks for it (envelope.py: a COMPLETE's
datasets, for its rules and lineage).

msgspec (the `kafka` extra) is imported on first use; without it every event goes the full way.
"""

# no `from __future__ import annotations`: msgspec reads the skeleton's annotations, which name
# classes local to `_make_decoder`, so they must be evaluated where they are written
from collections.abc import Callable
from typing import Annotated, Any

import attrs

from lineage_quality.bounds import MAX_RUN_ID_CHARS
from lineage_quality.producer.events import EVENT_TYPES, run_lane, time_problem
from lineage_quality.producer.kafka.keys import run_key
from lineage_quality.producer.receiver.body import RejectedError, check_structure, shallow
from lineage_quality.producer.run_verdicts import storable_ids
from lineage_quality.values.event import chain_run_ids


@attrs.frozen
class Facts:
    """A run event's facts, as `Envelope.of` and keys.py `message_key` read them from its parse."""

    event_type: str  # "" when it has none
    run_ids: tuple[str, ...]  # its run's, its parent's, its root's (each once, storable)
    lane: str
    key: str  # the Kafka key OpenLineage's transports give it
    lists_datasets: bool  # it names an input or an output


def read_facts(body: bytes) -> tuple[str, Facts] | None:
    """`body`'s text and facts when it is a run event the skeleton takes; None: read it the full
    way (which takes it or says why not)."""
    decode = _decoder()
    if decode is None or not shallow(body):  # deeper: `decode` may refuse what msgspec takes
        return None
    try:
        check_structure(body)
        event = decode(body)
        text = body.decode("utf-8")
    # msgspec's errors are ValueErrors, so is UTF-8's; nested too deep: a RecursionError
    except (RejectedError, ValueError, RecursionError):
        return None
    return _facts(event, text)


# -- the skeleton -----------------------------------------------------------------------------

_decode: list[Callable[[bytes], Any] | None] = []  # msgspec's decoder, made on first use


def _decoder() -> Callable[[bytes], Any] | None:
    if not _decode:
        _decode.append(_make_decoder())
    return _decode[0]


def _make_decoder() -> Callable[[bytes], Any] | None:
    """The skeleton's decoder: every type `check_event` checks, strict (a null where it wants a
    string, a number where it wants an object: msgspec refuses, the full way answers)."""
    try:
        import msgspec
    except ImportError:
        return None

    Text = Annotated[str, msgspec.Meta(min_length=1)]  # `_require_str`: non-empty

    class Facet(msgspec.Struct):  # a facet: any object (its fields skipped)
        pass

    Facets = dict[str, Facet | None] | None

    class LinkRun(msgspec.Struct):
        runId: str | None = None

    class LinkJob(msgspec.Struct):
        namespace: str | None = None
        name: str | None = None

    class Root(msgspec.Struct):
        run: LinkRun | None = None
        job: LinkJob | None = None

    class RunFacet(msgspec.Struct):  # any facet of the run; `parent`'s fields read
        run: LinkRun | None = None
        job: LinkJob | None = None
        root: Root | None = None

    class Run(msgspec.Struct):
        runId: Text
        facets: dict[str, RunFacet | None] | None = None

    class Job(msgspec.Struct):
        namespace: Text
        name: Text
        facets: Facets = None

    class Input(msgspec.Struct):
        namespace: Text
        name: Text
        facets: Facets = None
        inputFacets: Facets = None

    class Output(msgspec.Struct):
        namespace: Text
        name: Text
        facets: Facets = None
        outputFacets: Facets = None

    class RunEvent(msgspec.Struct):
        eventTime: Text
        producer: Text
        run: Run
        job: Job
        eventType: str | None = None
        schemaURL: str = ""  # present: a string (null refused)
        inputs: list[Input] | None = None
        outputs: list[Output] | None = None

    return msgspec.json.Decoder(RunEvent).decode


def _facts(event: Any, text: str) -> tuple[str, Facts] | None:
    """The facts of a decoded skeleton; None for what `check_event` refuses (said there)."""
    event_type = event.eventType
    if event_type is not None and event_type not in EVENT_TYPES:
        return None
    if time_problem(event.eventTime) is not None:
        return None
    run = event.run
    parent = run.facets.get("parent") if run.facets else None
    link = parent.run if parent is not None else None
    root = parent.root if parent is not None else None
    root_link = root.run if root is not None else None
    ids = (
        run.runId,
        link.runId if link is not None else None,
        root_link.runId if root_link is not None else None,
    )
    if any(i is not None and len(i) > MAX_RUN_ID_CHARS for i in ids):
        return None
    root_job = root.job if root is not None else None
    parent_job = parent.job if parent is not None else None
    key = run_key(
        root_job.namespace if root_job is not None else None,
        root_job.name if root_job is not None else None,
        parent_job.namespace if parent_job is not None else None,
        parent_job.name if parent_job is not None else None,
        event.job.namespace,
        event.job.name,
    )
    facts = Facts(
        event_type=event_type or "",
        run_ids=storable_ids(chain_run_ids(*ids)),
        lane=run_lane(run.runId),
        key=key,
        lists_datasets=bool(event.inputs or event.outputs),
    )
    return text, facts

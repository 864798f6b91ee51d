"""`Envelope`: one event as received, decoded once (issue 38).

The receiver parses a body once (rawjson: numbers as written); the envelope keeps that parse with
the facts every later step asks of it: the event type, the run ids (its run and its parent's),
the lane (the run the spool orders it in), and, asked once and remembered, the datasets that have
rules (`bound`). The intake, the spool (in memory, with the text), the worker, the evaluation and
the in-driver intake take it; nothing parses the text again, and no fact is derived twice. An
event read back from the database (after a restart, a retry) is parsed once, into an envelope.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import attrs

from lineage_quality import rawjson
from lineage_quality.producer.events import lane_of
from lineage_quality.producer.run_verdicts import run_ids
from lineage_quality.values.event import Event

if TYPE_CHECKING:
    from lineage_quality.producer.kafka.skeleton import Facts

EVALUATED_TYPES = frozenset({"COMPLETE"})
try:  # the `kafka` extra's: a skeleton's event parsed on first use (`Envelope.tree`)
    import orjson as _orjson
except ImportError:  # pragma: no cover - the extra not installed: rawjson
    _orjson = None  # type: ignore[assignment]


class Binder(Protocol):
    """What binds an event's datasets to rules (the evaluator)."""

    def bound(self, event: Any) -> Any: ...


def _quick_parse(text: str) -> Any:
    """A run event the skeleton took, parsed: by orjson when it is there and takes it (numbers
    as Python numbers: `exact` False), else as the receiver parses it."""
    if _orjson is not None:
        try:
            return _orjson.loads(text)
        except _orjson.JSONDecodeError:  # e.g. a number past a double's range (1e400)
            pass
    return parse(text)


def parse(body: str) -> Any:
    """`body` parsed as the receiver parses it (rawjson: numbers as written, NaN/Infinity
    refused); None: not JSON."""
    try:
        return rawjson.loads(body)
    except (ValueError, RecursionError):  # nested past Python's recursion limit: not taken
        return None


@attrs.frozen(eq=False)
class Envelope:
    """`text` as received and `tree`, its parse (None: not JSON). `event_type` is the event's
    `eventType` ("" when it has none), None when the text is not a JSON object; `lane` is None
    then too (the spool files it under "")."""

    text: str
    _tree: Any = attrs.field(alias="tree")
    event_type: str | None
    run_ids: tuple[str, ...]
    lane: str | None
    _event: Event | None = attrs.field(default=None, alias="event")
    # `tree` parsed with numbers as written (rawjson); False: Kafka in's quick parse (orjson:
    # receiver/body.py `decode_quick`), for the facts and forwarding the text as received only
    exact: bool = True
    # Kafka in's skeleton (kafka/skeleton.py): the facts read without the parse, which is made
    # (quick) only when something asks for `tree`
    facts: Facts | None = None
    _bound: list[Any] = attrs.field(factory=list, repr=False, alias="_bound")  # asked once
    _parsed: list[Any] = attrs.field(factory=list, repr=False, alias="_parsed")  # of `facts`
    _views: list[Event] = attrs.field(factory=list, repr=False, alias="_views")

    @classmethod
    def of(cls, text: str, tree: Any, exact: bool = True) -> Envelope:
        """The envelope of `text`, given its parse (`exact`: by rawjson)."""
        if not isinstance(tree, dict):
            return cls(text, tree, None, (), None)
        event = Event(tree)
        return cls(text, tree, event.event_type, tuple(run_ids(event)), lane_of(tree), event, exact)

    @classmethod
    def of_facts(cls, text: str, facts: Facts) -> Envelope:
        """The envelope of a run event `text` whose facts the skeleton read (not parsed yet)."""
        return cls(text, None, facts.event_type, facts.run_ids, facts.lane, None, False, facts)

    @property
    def tree(self) -> Any:
        if self.facts is None:
            return self._tree
        parsed = self._parsed
        if not parsed:  # two threads may both parse: each answers the first one kept
            parsed.append(_quick_parse(self.text))
        return parsed[0]

    @property
    def event(self) -> Event | None:
        """The event type's view of `tree` (None: not a JSON object)."""
        if self.facts is None:
            return self._event
        parsed = self.tree
        if not isinstance(parsed, dict):
            return None
        views = self._views
        if not views:  # one view, so that what it read once is not read again
            views.append(Event(parsed))
        return views[0]

    @property
    def lists_datasets(self) -> bool:
        """It names an input or an output (read from the skeleton when there is one)."""
        if self.facts is not None:
            return self.facts.lists_datasets
        tree = self.tree
        return isinstance(tree, dict) and Event.of(tree).names_datasets

    def exact_form(self) -> Envelope:
        """This envelope with `tree` parsed as written: what the spool keeps, for a worker to
        enrich and write back."""
        return self if self.exact else Envelope.read(self.text)

    @classmethod
    def read(cls, text: str) -> Envelope:
        """`text` parsed once, into its envelope."""
        return cls.of(text, parse(text))

    @property
    def is_event(self) -> bool:
        """A JSON object (the receiver checked the rest)."""
        return self.event_type is not None

    @property
    def complete(self) -> bool:
        """Of a type that is evaluated."""
        return self.event_type in EVALUATED_TYPES

    @property
    def kept(self) -> bool:
        """Kept parsed for the worker: a COMPLETE to evaluate or a FAIL to remember; the others
        are forwarded as received (the spool keeps only their text in memory)."""
        return self.complete or self.event_type == "FAIL"

    def bound(self, binder: Binder) -> Any:
        """`binder.bound(tree)`, computed on first use and remembered (one binder per process)."""
        if not self._bound:
            self._bound.append(binder.bound(self.tree))
        return self._bound[0]

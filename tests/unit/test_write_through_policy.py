"""When the receiver writes an event through (producer/write_through.py): only a plain http sink
that answered fast lately, never before it answered at all; a failure counts as slow."""

from __future__ import annotations

from typing import Any

from lineage_quality.producer.write_through import SinkLatency, WriteThrough


class _Sink:
    """A FastHttp stand-in answering each `send_once` with the next status of `answers`."""

    def __init__(self, *answers: int) -> None:
        self.answers = list(answers)
        self.sent: list[str] = []

    def send_once(self, text: str, timeout: float) -> int:
        self.sent.append(text)
        return self.answers.pop(0)


def _through(sink: Any, latency: SinkLatency, below: float | None = 0.005) -> WriteThrough:
    return WriteThrough(sink, latency, below, timeout=1.0)


def test_nothing_is_written_through_before_the_sink_answered_once() -> None:
    latency = SinkLatency(failed_as=5.0)
    assert not _through(_Sink(), latency).wanted()
    latency.took(0.001)
    assert _through(_Sink(), latency).wanted()


def test_a_slow_or_failing_sink_turns_it_off_until_it_is_fast_again() -> None:
    latency = SinkLatency(failed_as=5.0)
    latency.took(0.001)
    latency.took(0.050)  # one slow answer: the average is past 5 ms
    assert not _through(_Sink(), latency).wanted()
    for _ in range(30):
        latency.took(0.001)
    assert _through(_Sink(), latency).wanted()
    latency.failed()
    assert not _through(_Sink(), latency).wanted()


def test_off_without_a_bound_or_without_a_plain_http_sink() -> None:
    latency = SinkLatency(failed_as=5.0)
    latency.took(0.001)
    assert not _through(_Sink(), latency, below=None).wanted()
    assert not _through(None, latency).wanted()
    assert _through(None, latency).send("{}") == 0


def test_send_reports_the_status_and_counts_only_what_the_sink_took() -> None:
    latency = SinkLatency(failed_as=5.0)
    latency.took(0.001)
    sink = _Sink(200, 400, 0)
    through = _through(sink, latency)
    assert through.send("a") == 200
    assert through.sent == 1
    assert through.send("b") == 400  # refused: the caller spools it
    assert through.send("c") == 0  # no answer
    assert through.sent == 1
    assert sink.sent == ["a", "b", "c"]
    assert not through.wanted()  # the failures count as slow answers

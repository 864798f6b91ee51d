"""`kill -9` of a real `lineage-quality serve` mid-stream, restart on the same spool: every event
that got its 201 reaches the sink (at least once), each run in order; and with debug logging on,
neither the receiver's API key nor the sink's key ever appears in the producer's output."""

from __future__ import annotations

import threading
from pathlib import Path

from faultkit import (
    RecordingSink,
    Sender,
    ServeProcess,
    check_run_order,
    key_of,
    make_event,
    openlineage_yml,
    record_fault,
)

RUNS, PER_RUN = 10, 12
RECEIVER_KEY = "recv-key-7Qx2pLm9"
SINK_KEY = "sink-key-Zt4wB8nK"


def test_kill9_mid_stream_then_restart_loses_nothing(tmp_path: Path) -> None:
    sink = RecordingSink(api_key=SINK_KEY)
    sink.hold(after=30)  # the sink takes 30 events, then holds the rest: a backlog builds up
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    args = [
        "--contracts", str(contracts),
        "--port", "0",
        "--spool", str(tmp_path / "spool.db"),
        "--openlineage-config", str(openlineage_yml(tmp_path / "ol.yml", sink, SINK_KEY)),
    ]  # fmt: skip
    env = {"LINEAGE_QUALITY_API_KEY": RECEIVER_KEY}
    log = tmp_path / "serve.log"
    events = [make_event(run, seq) for seq in range(PER_RUN) for run in range(RUNS)]
    acked: set[tuple[str, int]] = set()
    first = ServeProcess(args, log, env)
    sender = Sender(first.url, RECEIVER_KEY)
    next_index = 0
    half_sent = threading.Event()

    def send_until_refused() -> None:
        nonlocal next_index
        for i in range(next_index, len(events)):
            try:
                status = sender.post(events[i])
            except OSError:
                return  # killed while this request was in flight: not acknowledged
            assert status == 201
            acked.add(key_of(events[i]))
            next_index = i + 1
            if next_index == len(events) // 2:
                half_sent.set()

    thread = threading.Thread(target=send_until_refused)
    thread.start()
    try:
        assert half_sent.wait(60)
        assert sink.wait_for(lambda s: len(s.events) >= 30, timeout=60)
        first.kill9()
        thread.join(60)
        killed_at = next_index
        pending_at_kill = len(acked) - len(sink.received() & acked)
        assert pending_at_kill > 0  # the kill really left accepted events unforwarded

        second = ServeProcess(args, log, env)  # same spool
        sink.release()
        sender = Sender(second.url, RECEIVER_KEY)
        send_until_refused()  # the client resends what was not acknowledged
        assert next_index == len(events)
        assert sink.wait_for(lambda s: acked <= s.received(), timeout=90)
        second.stop()
    finally:
        sender.close()
        sink.close()
        for proc in (first, second) if "second" in locals() else (first,):
            proc.stop()

    check_run_order(sink.events)
    forwarded = len(sink.received() & acked)
    lost = record_fault(
        "kill -9 mid-stream, restart",
        sent=len(events),
        accepted=len(acked),
        forwarded=forwarded,
        duplicates=len(sink.events) - len(sink.received()),
        killed_after=killed_at,
        spooled_at_kill=pending_at_kill,
    )
    assert lost == 0 and len(acked) == len(events)
    assert sink.unauthorized == 0

    output = log.read_text()
    assert "forwarding lineage events through HttpTransport" in output  # debug logs were on
    assert RECEIVER_KEY not in output and SINK_KEY not in output

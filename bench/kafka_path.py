"""The Kafka path of the producer, end to end: listener topic -> `serve` (Kafka in) -> output topic
(Kafka out), with 1 and 2 `serve` processes in one consumer group, beside the HTTP path
(bench/passthrough.py's `pass_through`) in the same sitting:
`python bench/kafka_path.py EVENTS.jsonl [--rounds N] [--events N] [--kafka-only]` (`--kafka-only`:
the bare relay and `serve`, interleaved, not the HTTP path). `make bench` runs it through
`run_producer` (bench/suite.py) when the Kafka jars are there (`make kafka-jars`).

The broker is the tests' (tests/kafka/kafka_broker.py: Apache Kafka, KRaft, one node, from the
jars `make kafka-jars` fetches). Events are the captured listener events (bench/producer.py's
`own_runs`: runs of their own per sender), keyed as the listener keys them; no rule binds them.

- **burst**: `EVENTS` events written to the input topic at once, after `WARM_UP` events went
  the same way unmeasured; events/s from the first write to the last message on the output
  topic (its CreateTime). Until it is there nothing reads either
  topic (only the output's end offsets are asked, `_await_count`): before 2026-12-07 the bench
  read the whole input topic back meanwhile, on the cores the path under test runs on.
- **relay**: the floor, measured in the same sitting beside each case: a bare confluent-kafka
  relay (`relay`: consume -> produce to the output topic, the producer settings `serve`'s Kafka
  out uses, offsets of the messages the broker acknowledged committed every 0.5 s, as `serve`
  commits) in place of `serve`, 1 and 2 processes in one group.
- **paced**: `PACED` events written at `PACED_RATE` events/s (well below either capacity); p50 and
  p99 of each event's time from its write to the input topic to serve's write to the output
  topic (the two messages' CreateTime stamps, ms).
- **CPU**: the CPU time (user + system, from /proc) the `serve` (or relay) processes spent over
  the burst, per event (`cpu_us_per_event`): on a shared machine the events/s move with the
  neighbours' load, the CPU an event costs much less. bench/kafka_threads.py splits it by thread
  (`kafka_path`'s `watch`).
Prints one JSON line per round.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "kafka"))
sys.path.insert(0, str(ROOT / "python"))

import producer  # noqa: E402  (bench/producer.py: events, own_runs, the HTTP path)
from kafka_broker import CLIENT_LOG, KafkaBroker  # noqa: E402
from thread_cpu import parse_stat  # noqa: E402

from lineage_quality.producer.kafka import message_key  # noqa: E402
from lineage_quality.sparksubmit import submit_env  # noqa: E402

EVENTS = 3000
# events through the path before the burst, unmeasured: the broker is a new JVM for each case,
# and its JIT compiling during the burst took a varying share of the 2 cores measured on
WARM_UP = 3000
PACED = 600
PACED_RATE = 100.0  # events/s
PARTITIONS = 4

# Told "start" just before the burst's first write and "end" once the output topic holds the
# burst (before the burst's stamps are read), with the pids of the relaying processes (`serve`s
# or bare relays) and of the broker's JVM: bench/kafka_threads.py reads /proc there.
BurstWatch = Callable[[str, list[int], int], None]


def _serve(
    tmp: Path,
    broker: KafkaBroker,
    name: str,
    topic_in: str,
    topic_out: str,
    group: str,
    extra: tuple[str, ...] = (),
    code: Path | None = None,
) -> subprocess.Popen[bytes]:
    """`serve` (from the `python/` of the checkout `code`, when given: a before)."""
    contracts = tmp / "no-match"
    contracts.mkdir(exist_ok=True)
    (contracts / "other.odcs.yaml").write_text(producer._contract("/nowhere/at/all", []))
    config = tmp / f"{name}.openlineage.yml"
    config.write_text(
        f"transport:\n  type: kafka\n  topic: {topic_out}\n  config:\n"
        f"    bootstrap.servers: '{broker.bootstrap}'\n    linger.ms: '1'\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE")}
    if code is not None:
        env["PYTHONPATH"] = str(code / "python")
    log = open(tmp / f"{name}.log", "w")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(
        [sys.executable, "-m", "lineage_quality.cli", "-v", "serve", "--contracts",
         str(contracts), "--port", "0", "--spool", str(tmp / f"{name}.spool.db"),
         "--spark-master", "local[1]", "--openlineage-config", str(config),
         "--kafka-bootstrap-servers", broker.bootstrap, "--kafka-topic", topic_in,
         "--kafka-group-id", group, *extra],
        env=submit_env(env), stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
    )  # fmt: skip


def _relay(
    tmp: Path,
    broker: KafkaBroker,
    name: str,
    topic_in: str,
    topic_out: str,
    group: str,
    extra: tuple[str, ...] = (),
    code: Path | None = None,
) -> subprocess.Popen[bytes]:
    """The bare relay (`relay`) in a process of its own, as `serve` runs."""
    log = open(tmp / f"{name}.log", "w")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(
        [sys.executable, str(HERE / "kafka_path.py"), "--relay", broker.bootstrap, topic_in,
         topic_out, group],
        stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
    )  # fmt: skip


def relay(bootstrap: str, topic_in: str, topic_out: str, group: str) -> None:
    """The floor: consume `topic_in`, produce each message (its key and value) to `topic_out`
    with the producer settings of `serve`'s Kafka out (bench's `linger.ms` 1, acks=all,
    message.timeout.ms 30 s: transport.py's `producer_settings`), commit the offsets of what the
    broker acknowledged every 0.5 s (`--kafka-commit-every`'s default). Runs until SIGTERM."""
    import signal

    from confluent_kafka import Consumer, Producer, TopicPartition

    from lineage_quality.producer.kafka.transport import producer_settings

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    out = Producer({**producer_settings({"bootstrap.servers": bootstrap, "linger.ms": "1"}),
                    "logger": CLIENT_LOG})  # fmt: skip
    acked: dict[tuple[str, int], int] = {}

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
         "enable.auto.commit": False, "enable.auto.offset.store": False, "logger": CLIENT_LOG}
    )  # fmt: skip

    def assigned(_: Any, parts: list[Any]) -> None:
        print("Kafka in: assigned " + ", ".join(f"{p.topic}[{p.partition}]" for p in parts),
              flush=True)  # fmt: skip

    def revoked(_: Any, parts: list[Any]) -> None:
        out.flush(30)
        commit()
        for p in parts:
            acked.pop((p.topic, p.partition), None)
        print("Kafka in: revoked " + ", ".join(f"{p.topic}[{p.partition}]" for p in parts),
              flush=True)  # fmt: skip

    def commit() -> None:
        if acked:
            parts = [TopicPartition(t, p, o) for (t, p), o in acked.items()]
            try:
                consumer.commit(offsets=parts, asynchronous=False)
            except Exception as exc:
                print(f"commit failed: {exc}", flush=True)

    consumer.subscribe([topic_in], on_assign=assigned, on_revoke=revoked)
    last = time.monotonic()
    while not stop.is_set():
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            where, offset = (message.topic(), message.partition()), message.offset()

            def report(error: Any, _: Any, where: Any = where, offset: int = offset) -> None:
                if error is None:
                    acked[where] = max(acked.get(where, 0), offset + 1)

            while True:
                try:
                    out.produce(topic_out, value=message.value(), key=message.key(),
                                on_delivery=report)  # fmt: skip
                    break
                except BufferError:
                    out.poll(0.1)
        out.poll(0)
        if time.monotonic() - last >= 0.5:
            commit()
            last = time.monotonic()
    out.flush(30)
    commit()
    consumer.close()


def _ready(log: Path) -> bool:
    """serve printed where it listens and its /readyz answers 200 (the evaluator is up: its
    Spark start-up no longer competes for the cores), as the HTTP path waits for."""
    import http.client
    import re

    found = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", log.read_text(errors="replace"))
    if found is None:
        return False
    try:
        conn = http.client.HTTPConnection("127.0.0.1", int(found.group(1)), timeout=2)
        conn.request("GET", "/readyz")
        return conn.getresponse().status == 200
    except OSError:
        return False


def _assigned(log: Path) -> bool:
    lines = [ln for ln in log.read_text(errors="replace").splitlines() if "Kafka in: " in ln]
    wanted = [ln for ln in lines if "Kafka in: assigned" in ln or "Kafka in: revoked" in ln]
    return bool(wanted) and "assigned" in wanted[-1] and not wanted[-1].endswith("nothing")


def _keyed(bodies: list[bytes]) -> list[tuple[bytes, bytes]]:
    """Each body with the key the listener gives it (worked out before the clock starts: the
    listener's work, not the path's)."""
    return [(message_key(json.loads(body)).encode(), body) for body in bodies]


def _write(
    broker: KafkaBroker, topic: str, messages: list[tuple[bytes, bytes]], rate: float | None
) -> None:
    from confluent_kafka import Producer

    out = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 1, "logger": CLIENT_LOG})
    start = time.perf_counter()
    for i, (key, body) in enumerate(messages):
        if rate is not None:
            delay = start + i / rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
        out.produce(topic, value=body, key=key)
        out.poll(0)
    if out.flush(60):
        raise RuntimeError("the input topic did not take every event")


def _await_count(broker: KafkaBroker, topic: str, count: int, timeout: float) -> None:
    """Wait until `topic` holds `count` messages, asking only its partitions' end offsets (every
    0.1 s): reading the messages themselves while the path under test runs would take the
    cores it runs on (the slower the path, the more), which the burst's figure must not pay."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": f"bench-{uuid.uuid4().hex}",
         "logger": CLIENT_LOG}
    )  # fmt: skip
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ends = [consumer.get_watermark_offsets(TopicPartition(topic, p), 5, cached=False)
                    for p in range(PARTITIONS)]  # fmt: skip
            if sum(high for _, high in ends) >= count:
                return
            time.sleep(0.1)
    finally:
        consumer.close()


def _cpu(processes: list[subprocess.Popen[bytes]]) -> float:
    """CPU seconds (user + system) `processes` used so far; 0.0 where /proc is not there."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0
    for p in processes:
        try:
            total += parse_stat(Path(f"/proc/{p.pid}/stat").read_text()).ticks
        except OSError:
            continue
    return total / ticks


def _pid(broker: KafkaBroker) -> int:
    assert broker.process is not None, "the broker runs"
    return broker.process.pid


def _stamps(
    broker: KafkaBroker, topic: str, count: int, timeout: float, of: set[bytes] | None = None
) -> dict[bytes, int]:
    """value -> CreateTime (ms) of the first `count` distinct values of `topic` (of those in
    `of`, when given: the others are a warm-up's)."""
    from confluent_kafka import Consumer

    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": f"bench-{uuid.uuid4().hex}",
         "auto.offset.reset": "earliest", "enable.auto.commit": False, "logger": CLIENT_LOG}
    )  # fmt: skip
    consumer.subscribe([topic])
    found: dict[bytes, int] = {}
    deadline = time.monotonic() + timeout
    try:
        while len(found) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None or message.error():
                continue
            value = message.value()
            if of is None or value in of:
                found.setdefault(value, message.timestamp()[1])
    finally:
        consumer.close()
    if len(found) < count:
        raise RuntimeError(f"only {len(found)} of {count} events reached {topic}")
    return found


def kafka_path(
    tmp: Path,
    events: list[bytes],
    consumers: int,
    extra: tuple[str, ...] = (),
    bare: bool = False,
    burst: int = EVENTS,
    code: Path | None = None,
    watch: BurstWatch | None = None,
) -> dict[str, float]:
    """The burst and paced figures with `consumers` serve processes in one group (`extra`: more
    serve options), or with as many bare relays (`bare`: the floor); `burst` events in the
    burst; `watch` told at its start and end."""
    start = _relay if bare else _serve
    kind = "relay" if bare else "before" if code else "serve"
    broker = KafkaBroker(tmp / f"kafka-{kind}-{consumers}")
    broker.start()
    serves: list[subprocess.Popen[bytes]] = []
    try:
        figures: dict[str, float] = {"consumers": consumers}
        for case, count, rate in (("burst", burst, None), ("paced", PACED, PACED_RATE)):
            topic_in, topic_out = f"in-{case}", f"out-{case}"
            broker.create_topic(topic_in, PARTITIONS)
            broker.create_topic(topic_out, PARTITIONS)
            group = f"bench-{case}"
            names = [f"{kind}-{consumers}-{case}-{i}" for i in range(consumers)]
            serves = [start(tmp, broker, n, topic_in, topic_out, group, extra, code) for n in names]
            deadline = time.monotonic() + 300
            while not all(
                (bare or _ready(tmp / f"{n}.log")) and _assigned(tmp / f"{n}.log") for n in names
            ):
                if time.monotonic() > deadline:
                    raise RuntimeError("the consumer group did not form")
                time.sleep(0.5)
            time.sleep(2)  # the group settled (a last rebalance)
            bodies = producer.own_runs(events, producer.CLIENTS, count, f"{case}-{consumers}")
            messages = _keyed(bodies)
            warm = 0
            if case == "burst":  # the broker's JIT and the path warmed up first, unmeasured
                warm = WARM_UP
                _write(broker, topic_in, _keyed(producer.own_runs(
                    events, producer.CLIENTS, warm, f"warm-{consumers}")), None)  # fmt: skip
                _await_count(broker, topic_out, warm, 600)
                if watch is not None:
                    watch("start", [s.pid for s in serves], _pid(broker))
            started, cpu = time.time(), _cpu(serves)
            _write(broker, topic_in, messages, rate)
            if case == "burst":  # the end of the output topic only: nothing read meanwhile
                _await_count(broker, topic_out, warm + count, 600)
                cpu_after = _cpu(serves)
                if watch is not None:
                    watch("end", [s.pid for s in serves], _pid(broker))
            else:
                sent = _stamps(broker, topic_in, count, 120)
            out = _stamps(broker, topic_out, count, 600, set(bodies))
            if case == "burst":
                figures["burst_events"] = count
                figures["burst_per_second"] = count / ((max(out.values()) / 1000) - started)
                figures["cpu_us_per_event"] = 1e6 * (cpu_after - cpu) / count
            else:
                lat = sorted(out[v] - sent[v] for v in sent)
                figures["paced_events"] = count
                figures["paced_rate"] = rate or 0.0
                figures["p50_ms"] = statistics.median(lat)
                figures["p99_ms"] = lat[int(0.99 * (len(lat) - 1))]
            for serve in serves:
                serve.terminate()
            for serve in serves:
                serve.wait(60)
            serves = []
        return figures
    finally:
        for serve in serves:
            serve.kill()
        broker.stop()


def usable() -> str | None:
    """Why the Kafka case cannot run here (no jars, no client), None when it can."""
    from kafka_broker import KAFKA_JARS

    if not any(KAFKA_JARS.glob("kafka_2.13-*.jar")):
        return f"no Kafka jars in {KAFKA_JARS} (make kafka-jars)"
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        return "no confluent-kafka (pip install 'lineage-quality[kafka]')"
    return None


def cases(tmp: Path, events: list[bytes], http: dict[str, Any]) -> dict[str, Any]:
    """The Kafka path with 1 and 2 consumers, beside `http` (bench/producer.py's
    `pass_through` of the same sitting)."""
    return {"http": {"serve": http["serve"]}, **interleaved(tmp, events)}


def interleaved(
    tmp: Path,
    events: list[bytes],
    count: int = EVENTS,
    extra: tuple[str, ...] = (),
    before: Path | None = None,
) -> dict[str, Any]:
    """The bare relay and `serve` (and `serve` of the checkout `before`, when given), one after
    the other, with 1 then 2 consumers: one sitting."""
    doc: dict[str, Any] = {}
    for n in (1, 2):
        doc[f"relay_{n}"] = kafka_path(tmp, events, n, bare=True, burst=count)
        if before is not None:
            doc[f"before_{n}"] = kafka_path(tmp, events, n, extra, burst=count, code=before)
            doc[f"before_{n}"]["of_relay"] = (
                doc[f"before_{n}"]["burst_per_second"] / doc[f"relay_{n}"]["burst_per_second"]
            )
        doc[f"kafka_{n}"] = kafka_path(tmp, events, n, extra, burst=count)
        doc[f"kafka_{n}"]["of_relay"] = (
            doc[f"kafka_{n}"]["burst_per_second"] / doc[f"relay_{n}"]["burst_per_second"]
        )
    return doc


def run(tmp: Path, events: list[bytes]) -> dict[str, Any]:
    """The HTTP path, then the Kafka path with 1 and 2 consumers: one sitting."""
    from passthrough import pass_through

    return cases(tmp, events, pass_through(tmp, events, None))


def markdown(doc: dict[str, Any]) -> list[str]:
    http = doc["http"]["serve"]
    rows = [
        "## Kafka in and out",
        "",
        "Beside each `serve` case, in the same sitting: a bare relay (confluent-kafka consume -> "
        "produce to the output topic, the producer settings of `serve`'s Kafka out, offsets of "
        "what the broker acknowledged committed every 0.5 s) in its place: the floor.",
        "",
        f"The same captured events, no rule binding them. HTTP: {producer.EVENTS} POSTs by "
        f"{producer.CLIENTS} keep-alive senders to `serve`, forwarding to an HTTP sink. Kafka: "
        f"{EVENTS} events written at once to a {PARTITIONS}-partition topic (keyed by run, as the "
        f"listener writes them), `serve` consuming it and forwarding to another topic; latency: "
        f"{PACED} events at {PACED_RATE:.0f}/s, from the write to the input topic to serve's write "
        "to the output topic. One broker (KRaft), the producers and the clients share 2 cores.",
        "",
        "| path | consumers | events/s | p50 ms | p99 ms | CPU us/event |",
        "|---|---:|---:|---:|---:|---:|",
        f"| HTTP -> serve -> HTTP sink (forwarded) | - | {http['forwarded_per_second']:.0f} | "
        f"{http['p50_ms']:.1f} (POST) | {http['p99_ms']:.1f} (POST) | |",
    ]
    for n in (1, 2):
        r, k = doc[f"relay_{n}"], doc[f"kafka_{n}"]
        rows.append(
            f"| topic -> bare relay -> topic (the floor) | {n} | {r['burst_per_second']:.0f} | "
            f"{r['p50_ms']:.0f} | {r['p99_ms']:.0f} | {r['cpu_us_per_event']:.0f} |"
        )
        rows.append(
            f"| topic -> serve -> topic | {n} | {k['burst_per_second']:.0f} "
            f"({100 * k['of_relay']:.0f} % of the relay) | {k['p50_ms']:.0f} | {k['p99_ms']:.0f} "
            f"| {k['cpu_us_per_event']:.0f} |"
        )
    return [*rows, ""]


def main() -> None:
    if sys.argv[1:2] == ["--relay"]:  # a bare relay's process (`_relay`)
        relay(*sys.argv[2:6])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("events", type=Path)
    parser.add_argument("--events", type=int, default=EVENTS, dest="count",
                        help="events in the burst")  # fmt: skip
    parser.add_argument(
        "--before", type=Path, help="with --kafka-only: also `serve` of this checkout (a before)"
    )
    parser.add_argument(
        "--kafka-only", action="store_true", help="the relay and serve only, not the HTTP path"
    )
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--workers", type=int, default=0, help="only the Kafka path, serve --workers N"
    )
    args = parser.parse_args()
    events = [e for e in args.events.read_bytes().splitlines() if e.strip()]
    for _ in range(args.rounds):
        tmp = Path(tempfile.mkdtemp(prefix="lq-kafka-bench-"))
        try:
            if args.workers or args.kafka_only:
                extra = ("--workers", str(args.workers)) if args.workers else ()
                doc = interleaved(tmp, events, args.count, extra, args.before)
                print(json.dumps({"workers": args.workers, **doc}), flush=True)
                continue
            doc = run(tmp, events)
            print(json.dumps(doc), flush=True)
            print("\n".join(markdown(doc)), flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

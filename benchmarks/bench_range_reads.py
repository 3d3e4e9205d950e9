"""Many small offset ranges read one after another (issue 25): what a task of packed
ranges (`offsets-per-task`) and the stream driver's scan do over a topic of many
partitions, by the consumer's `fetch.wait.max.ms`. No Spark.

    python benchmarks/bench_range_reads.py --partitions 200 --messages 20 --waits 20,5,1

Apache Kafka (tests/support/kafka.py, KRaft, one node); a topic of --partitions
partitions, --messages messages of 100 bytes in each. For each value of --waits, --rounds
times: one `TopicLog` (the reader's consumer, `kafka.fetch.wait.max.ms` set to the value)
reads every partition's whole range, one after the other, as `read.scan.read_parts` and
`StreamScan` do. Each round checks it read every message. Prints a line per round and one
JSON line (--output writes it too): seconds per round and milliseconds per range.

The fetch librdkafka has in flight when a range ends waits at the broker for up to
`fetch.wait.max.ms` (there is no new data); the next range's first fetch goes out after
it, so each range costs about that long on top of its messages.

`--task` fills the partitions with Simple JSON instead (a BOOTSTRAP, --messages rows of
a two-column table, a watermark) and, beside the plain reads, reads every range as one
packed Spark task does (`read.scan.read_parts`, with the reader's default options but
the wait): the task's milliseconds per range, wall and CPU, against the plain read's
show how much of a task's time is Kafka's.

    python benchmarks/bench_range_reads.py --partitions 1000 --messages 6 --waits 1 --task
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from _common import environment

from tests.support.kafka import KafkaBroker
from ticdc_sink.read.consumer import TopicLog
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig

TOPIC = "ranges"


def simple_partition(partition: int, messages: int) -> list[bytes | None]:
    """A partition's Simple JSON values (`--task`): a BOOTSTRAP, `messages` INSERTs, a
    watermark."""
    from tests.support.read_log import simple_messages, table
    from ticdc_sink.events import Op

    rows = [
        (Op.INSERT, 100 + i, (partition * messages + i, f"r{i}"), None) for i in range(messages)
    ]
    return simple_messages(table("t"), rows, watermark=100 + messages)


def fill(bootstrap: str, partitions: int, messages: int, *, task: bool = False) -> int:
    """The topic's messages per partition."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, partitions, 1)])[TOPIC].result()
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    values: list[bytes | None] = [b"x" * 100] * messages
    for partition in range(partitions):
        if task:
            values = simple_partition(partition, messages)
        for value in values:
            producer.produce(TOPIC, value=value, partition=partition)
    producer.flush()
    return len(values)


def _config(bootstrap: str, wait_ms: str) -> ReadConfig:
    return ReadConfig.from_options(
        {"kafka.bootstrap.servers": bootstrap, "topic": TOPIC, "kafka.fetch.wait.max.ms": wait_ms}
    )


def read_round(bootstrap: str, wait_ms: str, partitions: int, messages: int) -> float:
    """Seconds to read every partition's range through one log, one range after another."""
    with TopicLog(_config(bootstrap, wait_ms)) as log:
        started = time.perf_counter()
        read = sum(
            1 for p in range(partitions) for _ in log.read(OffsetRange(TOPIC, p, 0, messages))
        )
        seconds = time.perf_counter() - started
    if read != partitions * messages:
        raise SystemExit(f"read {read} messages of {partitions * messages}")
    return seconds


def task_round(bootstrap: str, wait_ms: str, partitions: int, messages: int) -> tuple[float, float]:
    """Seconds, wall and CPU, of one task reading every partition's range (`read_parts`)."""
    from ticdc_sink.read.plan import plan_read
    from ticdc_sink.read.scan import read_parts

    config = _config(bootstrap, wait_ms)
    with TopicLog(config) as log:
        plan = plan_read(config, log)
        parts = tuple((OffsetRange(TOPIC, p, 0, messages), 0) for p in range(partitions))
        started, cpu = time.perf_counter(), time.process_time()
        rows = sum(b.num_rows for b in read_parts(config, plan.table, plan.known, parts, log=log))
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    if rows != partitions * (messages - 2):
        raise SystemExit(f"the task read {rows} rows of {partitions * (messages - 2)}")
    return seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=200)
    parser.add_argument("--messages", type=int, default=20, help="messages per partition")
    parser.add_argument("--waits", default="20,5,1", help="fetch.wait.max.ms values, in ms")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--task", action="store_true", help="Simple JSON, also read as a task")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    waits = args.waits.split(",")
    results: list[dict[str, Any]] = []
    with KafkaBroker() as broker:
        messages = fill(broker.bootstrap, args.partitions, args.messages, task=args.task)
        for round_ in range(args.rounds):
            for wait in waits:  # interleaved: each round runs every value once
                seconds = read_round(broker.bootstrap, wait, args.partitions, messages)
                per_range = 1000 * seconds / args.partitions
                found: dict[str, Any] = {"seconds": seconds, "ms_per_range": per_range}
                line = f"{seconds:.2f} s, {per_range:.1f} ms per range"
                if args.task:
                    wall, cpu = task_round(broker.bootstrap, wait, args.partitions, messages)
                    found |= {
                        "task_seconds": wall,
                        "task_ms_per_range": 1000 * wall / args.partitions,
                        "task_cpu_ms_per_range": 1000 * cpu / args.partitions,
                    }
                    line += (
                        f"; as a task {wall:.2f} s, {found['task_ms_per_range']:.1f} ms per "
                        f"range ({found['task_cpu_ms_per_range']:.1f} ms of CPU)"
                    )
                print(f"fetch.wait.max.ms={wait} round {round_}: {line}", flush=True)
                results.append({"wait_ms": int(wait), "round": round_, **found})
    line = json.dumps(
        {
            "environment": environment(),
            "partitions": args.partitions,
            "messages": messages,
            "task": args.task,
            "results": results,
        }
    )
    print(line)
    if args.output:
        args.output.write_text(line + "\n")


if __name__ == "__main__":
    main()

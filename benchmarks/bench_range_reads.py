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


def fill(bootstrap: str, partitions: int, messages: int) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, partitions, 1)])[TOPIC].result()
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for partition in range(partitions):
        for _ in range(messages):
            producer.produce(TOPIC, value=b"x" * 100, partition=partition)
    producer.flush()


def read_round(bootstrap: str, wait_ms: str, partitions: int, messages: int) -> float:
    """Seconds to read every partition's range through one log, one range after another."""
    config = ReadConfig.from_options(
        {"kafka.bootstrap.servers": bootstrap, "topic": TOPIC, "kafka.fetch.wait.max.ms": wait_ms}
    )
    with TopicLog(config) as log:
        started = time.perf_counter()
        read = sum(
            1 for p in range(partitions) for _ in log.read(OffsetRange(TOPIC, p, 0, messages))
        )
        seconds = time.perf_counter() - started
    if read != partitions * messages:
        raise SystemExit(f"read {read} messages of {partitions * messages}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=200)
    parser.add_argument("--messages", type=int, default=20, help="messages per partition")
    parser.add_argument("--waits", default="20,5,1", help="fetch.wait.max.ms values, in ms")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    waits = args.waits.split(",")
    results: list[dict[str, Any]] = []
    with KafkaBroker() as broker:
        fill(broker.bootstrap, args.partitions, args.messages)
        for round_ in range(args.rounds):
            for wait in waits:  # interleaved: each round runs every value once
                seconds = read_round(broker.bootstrap, wait, args.partitions, args.messages)
                per_range = 1000 * seconds / args.partitions
                print(
                    f"fetch.wait.max.ms={wait} round {round_}: {seconds:.2f} s, "
                    f"{per_range:.1f} ms per range",
                    flush=True,
                )
                results.append(
                    {
                        "wait_ms": int(wait),
                        "round": round_,
                        "seconds": seconds,
                        "ms_per_range": per_range,
                    }
                )
    line = json.dumps(
        {
            "environment": environment(),
            "partitions": args.partitions,
            "messages": args.messages,
            "results": results,
        }
    )
    print(line)
    if args.output:
        args.output.write_text(line + "\n")


if __name__ == "__main__":
    main()

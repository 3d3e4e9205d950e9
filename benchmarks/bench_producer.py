"""Producer settings compared, no Spark: the sink's `KafkaProducer` sends the same
messages (real encoded messages of the reference table, per protocol) to a fresh local
broker under each setting, the way the writer does (`send_many` per record batch, one
partition), then flushes. Measures wall time and CPU time of this process (librdkafka's
threads included) -- what the settings cost and give on one machine.

    python benchmarks/bench_producer.py --rows 200000 --protocols simple-json,debezium

Settings (`--settings`, comma-separated names): `default` (the sink's defaults: librdkafka's
linger.ms=5, batch.size=1000000, no compression), `linger20`, `linger50`, `lz4`, `zstd`,
`snappy`, `lz4-linger20`. Prints one JSON line per (protocol, setting).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import _common as common
from bench_write import CountingProducer, Registry, bench_plan

from tests.support.reference_table import make_batches, with_commit_ts
from ticdc_sink._local_broker import LocalBroker
from ticdc_sink.config import SinkConfig
from ticdc_sink.producer import KafkaProducer
from ticdc_sink.writer import write_batches

SETTINGS: dict[str, dict[str, str]] = {
    "default": {},
    "linger20": {"kafka.linger.ms": "20"},
    "linger50": {"kafka.linger.ms": "50"},
    "lz4": {"kafka.compression.type": "lz4"},
    "zstd": {"kafka.compression.type": "zstd"},
    "snappy": {"kafka.compression.type": "snappy"},
    "lz4-linger20": {"kafka.compression.type": "lz4", "kafka.linger.ms": "20"},
}
BATCH = 10_000


class Recorder(CountingProducer):
    """Keeps the (key, value) pairs the writer gives it, in order."""

    def __init__(self, config: Any = None) -> None:
        super().__init__(config)
        self.messages: list[tuple[bytes | None, bytes | None]] = []

    def send(self, topic: str, partition: int, key: Any, value: Any) -> None:
        self.messages.append((key, value))

    def send_many(self, topic: str, partition: int, key: Any, values: Any, keys: Any = None):
        keys = keys if keys is not None else [key] * len(values)
        self.messages.extend(zip(keys, values, strict=True))


def encoded_messages(protocol: str, rows: int) -> list[tuple[bytes | None, bytes | None]]:
    batches = with_commit_ts(make_batches(rows))
    recorder = Recorder()
    plan = bench_plan(protocol, batches)
    write_batches(batches, plan, producer_factory=lambda c: recorder, registry_factory=Registry)
    return recorder.messages


def run(protocol: str, setting: str, messages: list[Any]) -> dict[str, Any]:
    with LocalBroker() as broker:
        options = {**common.sink_options(broker.bootstrap, protocol, "http://127.0.0.1:1")}
        options.update(SETTINGS[setting])
        kafka = SinkConfig.from_options(options).kafka
        topic = f"bench_producer_{protocol}".replace("-", "_")
        with KafkaProducer(kafka) as producer:
            producer.partition_count(topic)
            wall, cpu = time.perf_counter(), time.process_time()
            for start in range(0, len(messages), BATCH):
                chunk = messages[start : start + BATCH]
                keys = [k for k, _ in chunk]
                producer.send_many(topic, 0, None, [v for _, v in chunk], keys=keys)
            producer.flush()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        size = sum(len(k or b"") + len(v or b"") for k, v in messages)
    return {
        "bench": "producer",
        "protocol": protocol,
        "setting": setting,
        "messages": len(messages),
        "mb": round(size / 1e6, 1),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "messages_per_s": round(len(messages) / wall),
        "mb_per_s": round(size / wall / 1e6, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--protocols", default="simple-json,debezium")
    parser.add_argument("--settings", default=",".join(SETTINGS))
    args = parser.parse_args()
    for protocol in args.protocols.split(","):
        messages = encoded_messages(protocol, args.rows)
        for setting in args.settings.split(","):
            print(json.dumps(run(protocol, setting, messages)), flush=True)


if __name__ == "__main__":
    main()

"""The streaming driver's scan (issue 25): per micro-batch, the messages the driver reads
and the ones it decodes whole against the rows in the batch, and its planning time, for
the code of a git ref (`--before`, default `main`) and of this checkout, with the default
`driver-scan=all` and with `driver-scan=watermarks` (the driver reads watermarks back from
each partition's end, not the rows), in one run on the same topics.

    python benchmarks/bench_driver_scan.py --sizes 10000,100000 --rounds 3 [--trailing 500]

Per protocol (`simple` JSON, `simple-avro` (Simple with encoding-format avro), `canal-json`
and `debezium` with enable-tidb-extension) a
topic of `--partitions` partitions on Apache Kafka (tests/support/kafka.py) holds, for
each batch size and round, one micro-batch: `size` INSERTs of a 6-column table spread
round-robin over the partitions, a watermark to every partition after each `--mark-every`
rows per partition and at the batch's end (a Simple topic starts with a BOOTSTRAP per
partition); with `--trailing n`, n rows more in each partition after that watermark (a
transaction not resolved yet: the stream's end falls between watermarks, and the batch
ends at the watermark before them). Messages are encoded by the writer's encoders and
sent by one idempotent producer, so each batch's end offsets are known.

The driver is `read.stream.StreamScan` over `read.consumer.TopicLog`, as the stream
reader makes them (startingOffsets earliest, the defaults otherwise: watermark
consistency, replays dropped); each micro-batch is planned by `next_cut` up to that
batch's end offsets (Trigger.AvailableNow's target), then committed (`forget_before`):
what the driver does per trigger of a stream that keeps up. Counted alike for every run
by wrapping the log's `read` (messages read) and `read.stream.decode_events` (messages
decoded whole); times are wall clock and CPU (`process_time`) of `next_cut`. Each tree runs
in its own process with its `ticdc_sink` first on PYTHONPATH (the ref's from `git
archive`), so the runs read the same topics one after the other.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

PROTOCOLS = ("simple", "simple-avro", "canal-json", "debezium")


def _codec(protocol: str) -> Any:
    from ticdc_sink.codec.choices import EncodingFormat
    from ticdc_sink.config import CodecConfig

    if protocol == "simple-avro":
        return CodecConfig(protocol="simple", encoding_format=EncodingFormat.AVRO)
    return CodecConfig(protocol=protocol, enable_tidb_extension=protocol != "simple")


def _options(protocol: str) -> dict[str, str]:
    """The read options of a `PROTOCOLS` name."""
    if protocol == "simple-avro":
        return {"protocol": "simple", "encoding-format": "avro"}
    return {"protocol": protocol, "enable-tidb-extension": str(protocol != "simple").lower()}


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Plan each micro-batch of `spec` with the `ticdc_sink` this process imports."""
    import ticdc_sink
    import ticdc_sink.read.stream as stream
    from ticdc_sink.read.consumer import TopicLog
    from ticdc_sink.read.options import ReadConfig
    from ticdc_sink.read.plan import plan_read

    counts = {"read": 0, "decoded": 0}
    decode_events = stream.decode_events

    def counted_decode(*args: Any, **kwargs: Any) -> Any:
        counts["decoded"] += 1
        return decode_events(*args, **kwargs)

    stream.decode_events = counted_decode  # type: ignore[assignment]
    config = ReadConfig.from_options(
        {
            "kafka.bootstrap.servers": spec["bootstrap"],
            "topic": spec["topic"],
            **_options(spec["protocol"]),
            "startingoffsets": "earliest",
            **spec.get("options", {}),
        }
    )
    log = TopicLog(config)
    read = log.read

    def counted_read(offsets: Any) -> Any:
        records = read(offsets)
        try:
            for record in records:
                counts["read"] += 1
                yield record
        finally:
            records.close()

    log.read = counted_read  # type: ignore[method-assign]
    plan = plan_read(config, log)
    scan = stream.StreamScan(config, plan.table, plan.known, log)
    start = scan.initial_offset()
    batches = []
    for batch in spec["batches"]:
        target = {(spec["topic"], int(p)): o for p, o in batch["ends"].items()}
        before = dict(counts)
        wall, cpu = time.perf_counter(), time.process_time()
        cut = scan.next_cut(start, target, None)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        expected = {(spec["topic"], int(p)): o for p, o in batch["cut"].items()}
        if cut.end.offsets != expected:
            raise RuntimeError(f"the batch ended at {cut.end.offsets}, not {expected}")
        batches.append(
            {
                "size": batch["size"],
                "rows": cut.rows,  # None under driver-scan=watermarks: not counted
                "messages": start.size_to(cut.end),
                "read": counts["read"] - before["read"],
                "decoded": counts["decoded"] - before["decoded"],
                "wall_s": round(wall, 4),
                "cpu_s": round(cpu, 4),
            }
        )
        scan.forget_before(cut.end)
        start = cut.end
    scan.close()
    return {"ticdc_sink": str(Path(ticdc_sink.__file__).parent), "batches": batches}


def write_topic(broker: Any, protocol: str, args: argparse.Namespace) -> dict[str, Any]:
    """The topic's micro-batches, sent; each with its size and end offsets."""
    from confluent_kafka import Producer

    from tests.support.read_log import table
    from ticdc_sink.codec.protocols import build_encoder, encode_watermark
    from ticdc_sink.events import Op, RowChange

    schema = table(
        "orders",
        {
            "customer": "varchar(40)",
            "amount": "decimal(10,2)",
            "quantity": "int",
            "note": "text",
            "created": "datetime",
        },
    )
    topic = f"driver-scan-{protocol}"
    partitions = args.partitions
    broker.create_topic(topic, partitions)
    codec = _codec(protocol)
    encoder = build_encoder(codec, schema, build_ts_ms=1, topic=topic)
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "enable.idempotence": True,
            "linger.ms": 20,
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    ends = dict.fromkeys(range(partitions), 0)

    def send(partition: int, key: bytes | None, value: bytes | None) -> None:
        while True:
            try:
                producer.produce(topic, value, key, partition=partition)
                break
            except BufferError:
                producer.poll(0.1)
        ends[partition] += 1

    first = encoder.encode_bootstrap()
    for p in range(partitions):
        if first is not None:
            send(p, first.key, first.value)
    batches = []
    ts, key = 1 << 40, 0
    for size in args.sizes:
        for _ in range(args.rounds):
            for i in range(size):
                key += 1
                ts += 1
                row = (
                    key,
                    f"customer {key}",
                    f"{key % 1000}.25",
                    key % 7,
                    "a note",
                    "2026-11-28 00:00:00",
                )
                message = encoder.encode_row(RowChange(schema, Op.INSERT, ts, row, None))
                send(i % partitions, message.key, message.value)
                last = i == size - 1
                if last or (i + 1) % (args.mark_every * partitions) == 0:
                    mark = encode_watermark(codec, ts, build_ts_ms=1)
                    assert mark is not None
                    for p in range(partitions):
                        send(p, mark.key, mark.value)
                producer.poll(0)
            cut = dict(ends)
            for i in range(args.trailing * partitions):  # written by the next batch's ts
                key += 1
                row = (key, f"customer {key}", "1.25", 1, "a note", "2026-11-28 00:00:00")
                message = encoder.encode_row(RowChange(schema, Op.INSERT, ts + 1, row, None))
                send(i % partitions, message.key, message.value)
            batches.append({"size": size, "cut": cut, "ends": dict(ends)})
    producer.flush()
    found = broker.end_offsets(topic)
    if found != ends:
        raise RuntimeError(f"topic {topic} ends at {found}, not {ends}")
    return {"bootstrap": broker.bootstrap, "topic": topic, "protocol": protocol, "batches": batches}


def summary(results: list[dict[str, Any]]) -> None:
    print(
        "| protocol | batch rows | tree | messages | read | read / messages | decoded whole "
        "| decoded / messages | planning ms (median) | CPU ms (median) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for result in results:
        sizes = sorted({b["size"] for b in result["batches"]})
        for size in sizes:
            found = [b for b in result["batches"] if b["size"] == size]
            messages = statistics.median(b["messages"] for b in found)
            read = statistics.median(b["read"] for b in found)
            decoded = statistics.median(b["decoded"] for b in found)
            print(
                f"| {result['protocol']} | {size:,} | {result['tree']} "
                f"| {messages:,.0f} | {read:,.0f} | {read / messages:.2%} "
                f"| {decoded:,.0f} | {decoded / messages:.2%} "
                f"| {statistics.median(b['wall_s'] for b in found) * 1000:,.0f} "
                f"| {statistics.median(b['cpu_s'] for b in found) * 1000:,.0f} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default="10000,100000", help="rows per micro-batch")
    parser.add_argument("--rounds", type=int, default=3, help="micro-batches of each size")
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--mark-every", type=int, default=1000, help="rows per partition")
    parser.add_argument(
        "--trailing", type=int, default=0, help="rows per partition after a batch's end"
    )
    parser.add_argument("--protocols", default=",".join(PROTOCOLS))
    parser.add_argument("--before", default="main", help="git ref to compare ('' for none)")
    parser.add_argument("--output", help="also write the JSON report here")
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(json.loads(args.measure))))
        return
    args.sizes = [int(s) for s in args.sizes.split(",")]

    from _common import REPO, environment, export_ref, publish, run_in_tree, start_broker

    results = []
    with tempfile.TemporaryDirectory(prefix="driver-scan-") as scratch:
        watermarks = {"driver-scan": "watermarks"}
        trees = [("this checkout", REPO, {}), ("driver-scan=watermarks", REPO, watermarks)]
        if args.before:
            trees.insert(0, (args.before, export_ref(REPO, args.before, Path(scratch)), {}))
        with start_broker("kafka") as broker:
            for protocol in args.protocols.split(","):
                started = time.perf_counter()
                spec = write_topic(broker, protocol, args)
                print(f"{protocol}: written in {time.perf_counter() - started:.1f} s", flush=True)
                for name, tree, options in trees:
                    result = run_in_tree(__file__, tree, {**spec, "options": options})
                    results.append({"protocol": protocol, "tree": name, **result})
                    print(f"{protocol}, {name}: measured", flush=True)
    summary(results)
    publish(
        {
            "benchmark": "driver_scan",
            "environment": environment(),
            "load_average": os.getloadavg(),
            "args": {k: v for k, v in vars(args).items() if k != "measure"},
            "results": results,
        },
        args.output,
    )


if __name__ == "__main__":
    main()

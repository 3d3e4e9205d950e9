"""A read's task without Spark or a broker (issue 25, item 5): the CPU time per message of
`read.scan.read_range` over a topic held in memory, per protocol, for the code of a git
ref (`--before`, default `main`) and of this checkout, in one run on the same messages.

    python benchmarks/bench_read_task.py --rows 30000 --repeat 3 --rounds 3

The messages: `--rows` changes of a table of the reference table's ten columns
(`reference_table.COLUMN_TYPES`; 70% INSERTs, 20% UPDATEs with their old row, 10%
DELETEs, seeded), written once by this checkout's encoders to one partition (canal-json,
debezium and avro with the TiDB extension; a Simple BOOTSTRAP first; a watermark last;
avro's schemas in an in-memory registry), then read by each tree in a process of its own
(its `ticdc_sink` first on PYTHONPATH; the ref's from `git archive`): the plan
(`plan_read`), one read to warm up (each read as a Spark task reads, TiCDC's replays
dropped by the read's default rule), then `--repeat` reads of the whole partition, each
timed with `process_time` (a shared machine moves CPU time less than wall time). Rounds
interleave the trees (before, after, before, ...). Per tree and protocol: the best and
median µs of CPU per message over all its reads, and the rows read (the same in both).
`--profile N` prints the N largest entries of a cProfile of one read in this checkout.

`--ranges N` reads a packed task instead (issue 25, item 6: a stream over many
partitions): the changes dealt round-robin over N partitions (each with its own BOOTSTRAP
first and watermark last, as the writer's `partition=index-value` puts them), all N
ranges read by one `read.scan.read_parts`, as one Spark task of packed ranges reads them;
the report adds the milliseconds of CPU per range. avro is not offered there: a task
finds its schemas through the registry the options name.

    python benchmarks/bench_read_task.py --rows 6000 --ranges 1000 --protocols simple-json
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import io
import json
import os
import pickle
import pstats
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

PROTOCOLS = ("canal-json", "simple-avro", "simple-json", "debezium", "avro")


def _table() -> Any:
    from _common import COLUMN_TYPES

    from ticdc_sink.ddl import parse_mysql_type
    from ticdc_sink.schema import Column, Index, TableSchema

    columns = tuple(
        Column(name, parse_mysql_type(kind), nullable=name != "id", column_id=i + 1)
        for i, (name, kind) in enumerate(COLUMN_TYPES.items())
    )
    primary = (Index("PRIMARY", ("id",), unique=True, primary=True),)
    return TableSchema("bench", "orders", columns, primary, table_id=7, version=1)


def _changes(rows: int) -> list[Any]:
    from ticdc_sink.events import Op

    rng = random.Random(7)
    base = dt.datetime(2024, 1, 1)
    changes = []
    for i in range(rows):
        row = (
            i,
            rng.randint(0, 1000),
            f"name-{i}",
            f"a longer note for row {i} " * 2,
            rng.random() * 1000,
            f"{rng.randint(0, 10**8) / 100:.2f}",
            (base + dt.timedelta(seconds=i, microseconds=i % 1000)).isoformat(" "),
            (base + dt.timedelta(days=i % 3000)).date().isoformat(),
            i % 2,
            None if i % 3 else f"c{i}",
        )
        kind = rng.choice("cccccccuud")
        ts = 1000 + i
        if kind == "c":
            changes.append((Op.INSERT, ts, row, None))
        elif kind == "u":
            changes.append((Op.UPDATE, ts, row, (row[0], row[1] - 1, *row[2:])))
        else:
            changes.append((Op.DELETE, ts, None, row))
    return changes


def write_topics(rows: int, protocols: list[str], ranges: int = 0) -> dict[str, Any]:
    """Each protocol's messages of the same changes, by partition (one, or `ranges` dealt
    round-robin), and avro's registry schemas."""
    from tests.support.fake_registry import FakeRegistry
    from tests.support.read_log import protocol_messages
    from ticdc_sink.codec.choices import EncodingFormat
    from ticdc_sink.codec.config import CodecConfig
    from ticdc_sink.codec.protocols import build_encoder

    table, changes = _table(), _changes(rows)
    registry = FakeRegistry()
    topics: dict[str, Any] = {}
    dealt = [changes[p :: ranges or 1] for p in range(ranges or 1)]
    for protocol in protocols:
        partitions = {}
        for partition, some in enumerate(dealt):
            if protocol.startswith("simple"):
                codec = CodecConfig(encoding_format=EncodingFormat(protocol.split("-")[1]))
                bootstrap = build_encoder(codec, table, build_ts_ms=1).encode_bootstrap()
                assert bootstrap is not None
                entries = [(None, bootstrap.value)]
                entries += protocol_messages(codec, table, some, watermark=10**9)
            else:
                codec = CodecConfig(protocol=protocol, enable_tidb_extension=True)
                entries = protocol_messages(codec, table, some, watermark=10**9, registry=registry)
            partitions[partition] = entries
        topics[protocol] = partitions
    return {"topics": topics, "schemas": registry.texts}


def _options(protocol: str) -> dict[str, str]:
    options = {"kafka.bootstrap.servers": "unused:1", "topic": "t"}
    if protocol.startswith("simple"):
        options |= {"protocol": "simple", "encoding-format": protocol.split("-")[1]}
    else:
        options["protocol"] = protocol
    if protocol == "avro":
        options["schema-registry"] = "http://unused:1"
    return options


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Time the reads of `spec`'s topics with the `ticdc_sink` this process imports."""
    import ticdc_sink
    from tests.support.read_log import FakeTopicLog
    from ticdc_sink.read.options import ReadConfig
    from ticdc_sink.read.plan import plan_read
    from ticdc_sink.read.replay import replay_filter
    from ticdc_sink.read.scan import read_parts, read_range

    with open(spec["messages"], "rb") as f:
        written = pickle.load(f)
    schemas = written["schemas"]
    results = {}
    for protocol in spec["protocols"]:
        partitions = written["topics"][protocol]
        log = FakeTopicLog(partitions)
        config = ReadConfig.from_options(_options(protocol))
        plan = plan_read(config, log, schema_for_id=schemas.__getitem__)

        def read(plan: Any = plan, config: Any = config, log: Any = log) -> int:
            rows = 0
            if spec.get("ranges"):  # one task of every range, packed
                parts = tuple((offsets, 0) for offsets in plan.ranges)
                for batch in read_parts(config, plan.table, plan.known, parts, log=log):
                    rows += batch.num_rows
                return rows
            for offsets in plan.ranges:
                for batch in read_range(
                    config,
                    plan.table,
                    plan.known,
                    offsets,
                    log=log,
                    schema_for_id=schemas.__getitem__,
                    replays=replay_filter(config),  # as a Spark task reads (read_parts)
                ):
                    rows += batch.num_rows
            return rows

        rows = read()
        seconds = []
        for _ in range(spec["repeat"]):
            began = time.process_time()
            assert read() == rows
            seconds.append(time.process_time() - began)
        messages = sum(len(entries) for entries in partitions.values())
        results[protocol] = {
            "messages": messages,
            "ranges": len(plan.ranges),
            "rows": rows,
            "seconds": seconds,
        }
        if spec.get("profile"):
            profile = cProfile.Profile()
            profile.runcall(read)
            text = io.StringIO()
            pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(spec["profile"])
            results[protocol]["profile"] = text.getvalue()
    return {"ticdc_sink": str(Path(ticdc_sink.__file__).parent), "results": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--rows", type=int, default=30_000)
    parser.add_argument("--repeat", type=int, default=3, help="timed reads per round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per tree")
    parser.add_argument("--protocols", default="canal-json,simple-avro,simple-json")
    parser.add_argument(
        "--ranges", type=int, default=0, help="partitions read as one packed task (0: one read)"
    )
    parser.add_argument("--before", default="main", help="git ref to compare ('' for none)")
    parser.add_argument("--profile", type=int, default=0, help="cProfile entries (this tree)")
    parser.add_argument("--output", help="also write the JSON report here")
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(json.loads(args.measure))))
        return

    from _common import REPO, environment, export_ref, publish, run_in_tree

    protocols = [p for p in args.protocols.split(",") if p]
    unknown = set(protocols) - set(PROTOCOLS)
    if unknown:
        parser.error(f"unknown protocols {sorted(unknown)}; use some of {', '.join(PROTOCOLS)}")
    if args.ranges and "avro" in protocols:
        parser.error("--ranges reads through the registry the options name; leave out avro")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="read-task-") as scratch:
        messages = Path(scratch) / "messages.pickle"
        messages.write_bytes(pickle.dumps(write_topics(args.rows, protocols, args.ranges)))
        trees = [("this checkout", REPO)]
        if args.before:
            trees.insert(0, (args.before, export_ref(REPO, args.before, Path(scratch))))
        spec = {
            "messages": str(messages),
            "protocols": protocols,
            "repeat": args.repeat,
            "ranges": args.ranges,
        }
        seconds: dict[tuple[str, str], list[float]] = {}
        counts: dict[tuple[str, str], tuple[int, int, int]] = {}
        for round_ in range(args.rounds):
            for name, tree in trees:
                profile = args.profile if tree == REPO and round_ == 0 else 0
                result = run_in_tree(__file__, tree, {**spec, "profile": profile})
                for protocol, found in result["results"].items():
                    if "profile" in found:
                        print(f"--- {protocol}, {name}: cProfile of one read\n{found['profile']}")
                    seconds.setdefault((name, protocol), []).extend(found["seconds"])
                    counts[(name, protocol)] = (found["messages"], found["ranges"], found["rows"])
    results = []
    for (name, protocol), times in seconds.items():
        messages_, ranges, rows = counts[(name, protocol)]
        best, median = min(times) / messages_ * 1e6, statistics.median(times) / messages_ * 1e6
        per_range = statistics.median(times) / ranges * 1e3
        results.append(
            {
                "tree": name,
                "protocol": protocol,
                "messages": messages_,
                "ranges": ranges,
                "rows": rows,
                "best_us_per_message": round(best, 2),
                "median_us_per_message": round(median, 2),
                "median_ms_per_range": round(per_range, 3),
                "seconds": [round(t, 3) for t in times],
            }
        )
        print(
            f"{protocol:12} {name:14} {rows:,} rows of {messages_:,} messages in {ranges:,} "
            f"range(s): best {best:.1f} µs, median {median:.1f} µs of CPU a message, "
            f"{per_range:.2f} ms a range",
            flush=True,
        )
    publish(
        {
            "benchmark": "read_task",
            "environment": environment(),
            "load_average": {"before": load_before, "after": os.getloadavg()},
            "args": {k: v for k, v in vars(args).items() if k != "measure"},
            "results": results,
        },
        args.output,
    )


if __name__ == "__main__":
    main()

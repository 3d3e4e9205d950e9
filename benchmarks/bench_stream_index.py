"""The streaming driver's memory on a backlog (issue 25, item 6): what the driver's scan
(`read.stream.StreamScan`) holds after planning the first micro-batch of a stream started
on a backlog under `maxOffsetsPerTrigger`, for the code of a git ref (`--before`, default
`main`) and of this checkout, in one run on the same messages. No Spark, no broker.

    python benchmarks/bench_stream_index.py --rows 1000000 --limit 100000

The backlog: `--rows` Simple JSON INSERTs of a 2-column table spread round-robin over
`--partitions` partitions of a topic held in memory (tests/support/read_log.py's
`FakeTopicLog`, a BOOTSTRAP first in each partition), a watermark to every partition after
each `--mark-every` rows per partition. Each tree runs in its own process with its
`ticdc_sink` first on PYTHONPATH (the ref's from `git archive`): it builds the backlog,
starts `tracemalloc`, and plans two micro-batches (`next_cut` from startingOffsets
earliest, the second after the first committed, `forget_before`). Per micro-batch: the
bytes the scan holds after planning it (tracemalloc's current, over what was there
before the scan began: the partition index, which holds four 8-byte integers per row
and watermark it scanned, and the decoder's caches), the peak while planning, the
offsets the driver scanned, the offsets in the batch and the seconds it took (under
tracemalloc, so slower than without).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any


def backlog(spec: dict[str, Any]) -> Any:
    """The topic of `spec`, in memory."""
    from tests.support.read_log import WATERMARK, FakeTopicLog, simple_messages, simple_stream
    from tests.support.read_log import table as make_table
    from ticdc_sink.events import Op

    users = make_table("users")
    partitions, every = spec["partitions"], spec["mark_every"]
    items: dict[int, list[Any]] = {p: [] for p in range(partitions)}
    ts = 1000
    for row in range(spec["rows"]):
        items[row % partitions].append((Op.INSERT, ts, (row, "x")))
        if (row + 1) % (every * partitions) == 0:  # a transaction of that many rows ends
            for found in items.values():
                found.append((WATERMARK, ts))
            ts += 1
    for found in items.values():
        found.append((WATERMARK, ts))
    boot = simple_messages(users, [])
    return FakeTopicLog({p: boot + simple_stream(users, found) for p, found in items.items()})


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Plan two micro-batches of `spec` with the `ticdc_sink` this process imports."""
    import ticdc_sink
    from ticdc_sink.read.options import ReadConfig
    from ticdc_sink.read.plan import plan_read
    from ticdc_sink.read.stream import StreamScan

    log = backlog(spec)
    config = ReadConfig.from_options(
        {
            "kafka.bootstrap.servers": "unused:1",
            "topic": "t",
            "startingOffsets": "earliest",
            "maxOffsetsPerTrigger": str(spec["limit"]),
        }
    )
    plan = plan_read(config, log)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    scan = StreamScan(config, plan.table, plan.known, log)
    start = scan.initial_offset()
    batches = []
    for _ in range(2):
        tracemalloc.reset_peak()
        fetched = scan.fetched
        began = time.perf_counter()
        cut = scan.next_cut(start, None, spec["limit"])
        seconds = time.perf_counter() - began
        held, peak = tracemalloc.get_traced_memory()
        batches.append(
            {
                "batch_offsets": start.size_to(cut.end),
                "rows": cut.rows,
                "scanned": scan.fetched - fetched,
                "held_mib": round((held - base) / 2**20, 2),
                "peak_mib": round((peak - base) / 2**20, 2),
                "seconds": round(seconds, 2),
            }
        )
        scan.forget_before(cut.end)
        start = cut.end
    tracemalloc.stop()
    total = sum(hi for _, hi in log.all_bounds(["t"]).values())
    return {
        "ticdc_sink": str(Path(ticdc_sink.__file__).parent),
        "backlog_offsets": total,
        "batches": batches,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--mark-every", type=int, default=1000, help="rows per partition")
    parser.add_argument("--limit", type=int, default=100_000, help="maxOffsetsPerTrigger")
    parser.add_argument("--before", default="main", help="git ref to compare ('' for none)")
    parser.add_argument("--output", help="also write the JSON report here")
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(json.loads(args.measure))))
        return

    from _common import REPO, environment, export_ref, publish, run_in_tree

    spec = {k: getattr(args, k) for k in ("rows", "partitions", "mark_every", "limit")}
    results = []
    with tempfile.TemporaryDirectory(prefix="stream-index-") as scratch:
        trees = [("this checkout", REPO)]
        if args.before:
            trees.insert(0, (args.before, export_ref(REPO, args.before, Path(scratch))))
        for name, tree in trees:
            result = run_in_tree(__file__, tree, spec)
            results.append({"tree": name, **result})
            for i, batch in enumerate(result["batches"], 1):
                print(
                    f"{name}: micro-batch {i} of {batch['batch_offsets']:,} offsets: scanned "
                    f"{batch['scanned']:,}, held {batch['held_mib']} MiB (peak "
                    f"{batch['peak_mib']} MiB), {batch['seconds']} s",
                    flush=True,
                )
    publish(
        {
            "benchmark": "stream_index",
            "environment": environment(),
            "load_average": os.getloadavg(),
            "args": {k: v for k, v in vars(args).items() if k != "measure"},
            "results": results,
        },
        args.output,
    )


if __name__ == "__main__":
    main()

"""The demo's path, kept honest: `ticdc-sink demo` as a user runs it (a child process, since
it starts a Spark of its own), with its own broker (Tansu, from the `demo` extra) and
pointed at Kafka with `--bootstrap-servers`; and a write and a read back through Spark on
Tansu, the broker the demo gives a new user. Everything else runs on Kafka."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

import pytest

from tests.support.spark_read import read_topic, write_frame
from tests.support.tables import CHANGES, CHANGES_SCHEMA
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.decode import DecodedBootstrap, DecodedRow, DecodedWatermark

pytestmark = pytest.mark.integration

# The demo's 5 changes in one task to 2 partitions: a BOOTSTRAP and a WATERMARK in each.
EVENTS = {"BOOTSTRAP": 2, "INSERT": 3, "UPDATE": 1, "DELETE": 1, "WATERMARK": 2}


def demo(*argv: str) -> str:
    """`python -m ticdc_sink demo *argv`; its output."""
    done = subprocess.run(
        [sys.executable, "-m", "ticdc_sink", "demo", *argv],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def events_printed(out: str) -> dict[str, int]:
    """How many events of each kind the demo printed (`offset N  KIND ...` lines)."""
    kinds = [line.split()[2] for line in out.splitlines() if line.strip().startswith("offset")]
    return {kind: kinds.count(kind) for kind in sorted(set(kinds))}


def test_the_demo_starts_its_own_broker_warns_of_nothing_and_reports_its_whole_wall_time(
    tmp_path: Any,
) -> None:
    # `python -m ticdc_sink demo` as the Quick start runs it: its own broker (Tansu, the
    # demo's) and Spark session. Its time covers the whole command, parts included; no
    # Python warning is printed (PySpark warns at every start with pandas 3, which the test
    # extra keeps out).
    done = subprocess.run(
        [sys.executable, "-m", "ticdc_sink", "demo"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=900,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "local broker (Tansu) on 127.0.0.1:" in out
    assert "topic demo_shop_users: 9 messages" in out
    assert events_printed(out) == dict(sorted(EVENTS.items()))
    warnings = [line for line in (out + done.stderr).splitlines() if "Warning" in line]
    assert warnings == []
    last = out.strip().splitlines()[-1]
    numbers = [float(n) for n in re.findall(r"in (\d+\.\d) s", last)]
    assert last.startswith("done in ") and len(numbers) == 4, last
    total, *parts = numbers
    assert abs(total - sum(parts)) <= 0.2, last  # the parts make up the whole, rounded


def test_the_demo_writes_to_the_brokers_it_is_given(broker: Any, topics: Any) -> None:
    topic = topics("demo")
    out = demo("--bootstrap-servers", broker.bootstrap, "--topic", topic)
    assert f"Kafka brokers {broker.bootstrap}" in out and "Tansu" not in out
    assert f"topic {topic}: 9 messages" in out
    assert events_printed(out) == dict(sorted(EVENTS.items()))
    decoder = SimpleDecoder()
    events = [decoder.decode_message(r.key, r.value) for r in broker.consume_all(topic)]
    assert len([e for e in events if isinstance(e, DecodedRow)]) == 5


def test_a_write_reads_back_from_tansu(spark: Any, tansu: Any) -> None:
    topic = "demo_path_round_trip"
    options = {"database": "shop", "table": "items", "primary-key": "id", "partition-num": "2"}
    write_frame(spark.createDataFrame(CHANGES, CHANGES_SCHEMA), tansu, topic, **options)
    # Tansu's high watermarks lag behind multi-record batches (tests/support/broker.py): the
    # read ends at end markers, set once (a marker is no Simple message: a read must stop
    # before the first).
    ends = {str(p): o for p, o in tansu.end_offsets(topic).items()}
    result = read_topic(spark, tansu, topic, endingOffsets=json.dumps({topic: ends}))
    read = sorted((r["_commit_ts"], r["_op"]) for r in result.collect())
    events = [SimpleDecoder().decode_message(r.key, r.value) for r in tansu.consume_all(topic)]
    assert isinstance(events[0], DecodedBootstrap) and isinstance(events[-1], DecodedWatermark)
    written = sorted((e.commit_ts, e.op.value) for e in events if isinstance(e, DecodedRow))
    assert read == written and len(written) > len(CHANGES)  # a key change is 2 events


def test_a_debezium_topic_of_defaults_reads_back_every_row_from_tansu(
    spark: Any, tansu: Any
) -> None:
    # What a new user tries on the demo's broker: a debezium write with the writer's
    # defaults (no watermarks, so no end markers either) in produce batches of many
    # records, whose high watermarks Tansu reports low, then a read to `latest` and to an
    # explicit end. Every row comes back, or the read fails; none is lost silently.
    topic, rows = "demo_path_debezium_defaults", 202
    options = {
        "kafka.bootstrap.servers": tansu.bootstrap,
        "topic": topic,
        "protocol": "debezium",
        "database": "shop",
        "table": "items",
        "primary-key": "id",
    }
    tansu.create_topic(topic, 1)
    df = spark.range(rows).selectExpr("id", "concat('n', id) AS name").repartition(2)
    writer = df.write.format("ticdc").mode("append")
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.save()
    reading = {k: options[k] for k in ("kafka.bootstrap.servers", "topic", "protocol")}

    def read(**more: str) -> list[int]:
        reader = spark.read.format("ticdc")
        for name, value in {**reading, **more}.items():
            reader = reader.option(name, value)
        return sorted(r["id"] for r in reader.load().collect())

    assert read() == list(range(rows))
    assert read(endingOffsets=json.dumps({topic: {"0": rows}})) == list(range(rows))
    first = read(endingOffsets=json.dumps({topic: {"0": 50}}))
    assert len(first) == len(set(first)) == 50 and set(first) < set(range(rows))

"""The changefeed's [filter] section through Spark `local[2]` and Apache Kafka:
table rules and event filters drop rows before they are encoded; the batch report counts
them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ticdc_sink import tso
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.decode import DecodedRow
from ticdc_sink.events import Op

pytestmark = pytest.mark.integration

CHANGEFEED = """
[filter]
rules = ['shop.*', '!shop.tmp_*']

[[filter.event-filters]]
matcher = ['shop.users']
ignore-event = ['delete']
ignore-insert-value-expr = "name = 'spam' OR id > 100"
ignore-update-old-value-expr = "name LIKE 'old%'"
"""


def rows(broker: Any, topic: str) -> list[DecodedRow]:
    decoder = SimpleDecoder()
    decoded = (decoder.decode_message(r.key, r.value) for r in broker.consume_all(topic))
    return [e for e in decoded if isinstance(e, DecodedRow)]


def test_rules_and_event_filters_drop_rows(spark, broker, topics, tmp_path: Path) -> None:
    config = tmp_path / "changefeed.toml"
    config.write_text(CHANGEFEED)
    ts = [tso.compose(1_700_000_000_000 + i) for i in range(8)]
    df = spark.createDataFrame(
        [
            ("shop", "users", "c", ts[0], 1, "alice", None),
            ("shop", "users", "c", ts[1], 2, "spam", None),  # insert condition
            ("shop", "users", "c", ts[2], 101, "big", None),  # insert condition
            ("shop", "users", "c", ts[3], 3, None, None),  # NULL: kept
            ("shop", "tmp_users", "c", ts[4], 4, "x", None),  # table rule
            ("other", "users", "c", ts[5], 5, "y", None),  # table rule
            ("shop", "users", "u", ts[6], 1, "alicia", (1, "old alice")),  # old-value condition
            ("shop", "users", "d", ts[7], 3, None, None),  # ignore-event delete
        ],
        "_database string, _table string, _op string, _commit_ts bigint, id bigint, "
        "name string, _before struct<id: bigint, name: string>",
    ).coalesce(1)
    checkpoint = tmp_path / "checkpoint"
    (
        df.write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("config", str(config))
        .option("topic", topics("filtered_{schema}_{table}"))
        .option("partition-num", "1")
        .option("primary-key", "id")
        .option("checkpointLocation", str(checkpoint))
        .save()
    )
    sent = rows(broker, topics("filtered_shop_users"))
    assert [(r.op, r.data["id"], r.data["name"]) for r in sent] == [
        (Op.INSERT, 1, "alice"),
        (Op.INSERT, 3, None),
    ]
    (report_file,) = (checkpoint / "ticdc" / "reports").glob("job-*.json")
    report = json.loads(report_file.read_text())
    assert report["filtered"] == 6
    assert report["rows"] == 2

"""Row checksums through Spark `local[2]` and a real broker (Tansu): a changefeed file
with `[integrity] integrity-check-level = "correctness"` makes Simple JSON messages carry
TiCDC's checksum; the decoder checks every row, and one altered message is caught."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.support.checksums import crc32_bitwise
from ticdc_sink import tso
from ticdc_sink.decode import DecodedRow
from ticdc_sink.decode.simple import SimpleDecoder
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op

pytestmark = pytest.mark.integration

CHANGEFEED = """
[integrity]
integrity-check-level = "correctness"
corruption-handle-level = "warn"

[sink]
protocol = "simple"
"""

# The INSERT of id 1 as TiDB's appendDatumForChecksum appends it, columns in DataFrame
# order (the column IDs here): bigint, varchar, decimal text, TIMESTAMP(3) as UTC text.
ALICE = (
    "0100000000000000"
    + "05000000"
    + b"alice".hex()
    + "05000000"
    + b"12.50".hex()
    + "17000000"
    + b"2024-01-02 00:00:00.500".hex()
)


def test_checksums_are_written_and_checked(spark, broker, tmp_path: Path) -> None:
    config = tmp_path / "changefeed.toml"
    config.write_text(CHANGEFEED)
    ts = [tso.compose(1_700_000_000_000 + i) for i in range(4)]
    instant = dt.datetime(2024, 1, 2, 0, 0, 0, 500000)  # UTC: the session zone is UTC
    before = (1, "alice", Decimal("12.50"), instant)
    df = spark.createDataFrame(
        [
            ("c", ts[0], 1, "alice", Decimal("12.50"), instant, None),
            ("c", ts[1], 2, None, None, None, None),
            ("u", ts[2], 1, "alicia", Decimal("13.00"), instant, before),
            ("d", ts[3], 2, None, None, None, None),
        ],
        "_op string, _commit_ts bigint, id bigint, name string, amount decimal(10,2), "
        "ts timestamp, "
        "_before struct<id: bigint, name: string, amount: decimal(10,2), ts: timestamp>",
    ).coalesce(1)
    (
        df.write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("config", str(config))
        .option("topic", "checksums")
        .option("database", "shop")
        .option("table", "orders")
        .option("partition-num", "1")
        .option("primary-key", "id")
        .option("time-zone", "Asia/Shanghai")
        .option("column-types", json.dumps({"ts": "timestamp(3)"}))
        .save()
    )
    records = broker.consume_all("checksums")
    decoder = SimpleDecoder()
    decoded = [decoder.decode_message(r.key, r.value) for r in records]
    sent = [e for e in decoded if isinstance(e, DecodedRow)]
    assert [(r.op, r.typed) for r in sent] == [
        (Op.INSERT, True),
        (Op.INSERT, True),
        (Op.UPDATE, True),
        (Op.DELETE, True),
    ]
    checksums: list[Any] = [r.checksum for r in sent]
    assert all(c is not None and c.version == 0 and not c.corrupted for c in checksums)
    assert checksums[0].current == crc32_bitwise(bytes.fromhex(ALICE))
    assert checksums[2].previous == checksums[0].current  # the same image
    assert checksums[2].current not in (0, checksums[0].current)
    assert (checksums[3].current, checksums[3].previous) == (0, checksums[1].current)

    # one byte changed on the way is a DecodeError naming the row and both checksums
    first = next(r for r in records if b'"INSERT"' in (r.value or b""))
    altered = (first.value or b"").replace(b'"alice"', b'"alicf"')
    with pytest.raises(DecodeError) as info:
        decoder.decode_message(first.key, altered)
    line = str(info.value).splitlines()[0]
    assert "INSERT shop.orders key id=1" in line
    assert f"the message says {checksums[0].current}, its values give" in line

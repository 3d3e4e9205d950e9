"""Simple Avro's column-wise read (`SimpleRun` over an Avro decoder's plain rows) takes a
column whose values the row path's parser only type-checks whole, and leaves the run to
the row path when a value has another Python type than the parser takes (an Avro union
branch TiCDC does not write for the column)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from tests.support.schemas import ALL_TYPES_TABLE
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.codec.simple.read_columns import SimpleRun
from ticdc_sink.decode import PlainRow
from ticdc_sink.read.record import Record

# A value of each column's type as the reader gives it, and one of another type.
CASES = [
    ("i", -5, "-5"),
    ("i", 7, True),
    ("bi", 1 << 40, 1.0),
    ("f", 1.5, 2),
    ("d", 2.25, "2.25"),
    ("vc", "text", b"text"),
    ("dt", "2024-01-02", 20240102),
    ("bn", b"\x00\xff", "bytes"),
]


def _take(name: str, value: Any) -> Any:
    table = attrs.evolve(
        ALL_TYPES_TABLE, columns=tuple(c for c in ALL_TYPES_TABLE.columns if c.name in ("id", name))
    )
    run = SimpleRun(SimpleDecoder(encoding_format="avro"), table, kafka_columns=False, topic="t")
    for offset, data in enumerate([{"id": 1, name: value}, {"id": 2, name: None}]):
        run.add(
            PlainRow("INSERT", 10, "db", "t", 1, data, None), Record(0, offset, None, b"", None)
        )
    return run.take()[1]


@pytest.mark.parametrize(("name", "good", "other"), CASES)
def test_a_column_of_its_types_is_taken_and_one_of_others_is_left(
    name: str, good: Any, other: Any
) -> None:
    batch = _take(name, good)
    assert batch is not None
    assert batch.column(name).to_pylist() == [good, None]
    assert _take(name, other) is None  # the row path decides

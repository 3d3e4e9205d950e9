"""The row checksum (codec/checksum.py) against cases worked by hand from TiDB's
`appendDatumForChecksum` (pkg/util/rowcodec/common.go) and tiflow's consumer-side
`buildChecksumBytes` (pkg/sink/codec/common/verify_checksum.go): per value kind the bytes
appended, the CRC (IEEE, checked against a bitwise CRC-32 written here), the column-ID
order, NULLs, and the row path equal to the column-wise path on random rows."""

from __future__ import annotations

from typing import Any

import attrs
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.checksums import crc32_bitwise
from tests.support.hypothesis_profiles import examples
from tests.support.schemas import ALL_TYPES_TABLE, col, table_of
from tests.support.strategies import all_types_rows
from ticdc_sink.codec.checksum import RowChecksum, TableChecksum, checksum_bytes
from ticdc_sink.codec.mysql import ValueKind
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.errors import InputError, SchemaError
from ticdc_sink.events import Op, RowChange, split_key_update
from ticdc_sink.schema import Column

K = ValueKind


# (kind, mounter value, time zone, bytes appended): worked from appendDatumForChecksum.
CASES: list[tuple[ValueKind, Any, str, str]] = [
    # integers: binary.LittleEndian.AppendUint64(dat.GetUint64()), int64 as its two's complement
    (K.INT, 1, "UTC", "0100000000000000"),
    (K.INT, -1, "UTC", "ffffffffffffffff"),
    (K.INT, -9223372036854775808, "UTC", "0000000000000080"),
    (K.INT, 2024, "UTC", "e807000000000000"),  # YEAR
    (K.INT, True, "UTC", "0100000000000000"),  # a BOOL (tinyint(1)) value
    (K.UINT, 18446744073709551615, "UTC", "ffffffffffffffff"),
    (K.ENUM, 2, "UTC", "0200000000000000"),  # the index
    (K.SET, 5, "UTC", "0500000000000000"),  # the bitmask
    (K.BIT, 0b101, "UTC", "0500000000000000"),
    # floats: math.Float64bits(dat.GetFloat64()); a FLOAT datum holds float64(float32(v))
    (K.FLOAT64, 1.1, "UTC", "9a9999999999f13f"),
    (K.FLOAT32, 1.1, "UTC", "000000a09999f13f"),
    (K.FLOAT64, -0.0, "UTC", "0000000000000080"),
    (K.FLOAT64, float("nan"), "UTC", "0000000000000000"),  # "because ticdc has such a transform"
    (K.FLOAT32, float("inf"), "UTC", "0000000000000000"),
    # appendLengthValue: uint32 little-endian length, then the bytes
    (K.TEXT, "ab", "UTC", "020000006162"),
    (K.TEXT, "é", "UTC", "02000000c3a9"),
    (K.TEXT, "", "UTC", "00000000"),
    (K.BINARY, b"\x00\xff", "UTC", "0200000000ff"),
    (K.DECIMAL, "-1.50", "UTC", "050000002d312e3530"),  # MyDecimal.String(), scale digits kept
    (K.DATE, "2024-01-02", "UTC", "0a000000" + b"2024-01-02".hex()),
    (K.DATETIME, "2024-01-02 03:04:05.120", "UTC", "17000000" + b"2024-01-02 03:04:05.120".hex()),
    (K.TIME, "-838:59:59", "UTC", "0a000000" + b"-838:59:59".hex()),
    (K.JSON, '{"a": [1, 2]}', "UTC", "0d000000" + b'{"a": [1, 2]}'.hex()),
    # TIMESTAMP: t.ConvertTimeZone(loc, time.UTC), then Time.String() (fsp digits kept)
    (K.TIMESTAMP, "2024-01-02 03:04:05", "UTC", "13000000" + b"2024-01-02 03:04:05".hex()),
    (
        K.TIMESTAMP,
        "2024-01-02 08:00:00.5",
        "Asia/Shanghai",
        "15000000" + b"2024-01-02 00:00:00.5".hex(),
    ),
]


@pytest.mark.parametrize(("kind", "value", "zone", "expected"), CASES)
def test_value_bytes(kind: ValueKind, value: Any, zone: str, expected: str) -> None:
    assert checksum_bytes(kind, value, zone).hex() == expected


@pytest.mark.parametrize(
    ("zone", "local", "utc"),
    [
        # Go's time.Date in a repeated hour: the offset at the wall clock read as UTC,
        # unless the instant lies outside that offset's span. West of Greenwich that is the
        # earlier instant (EDT), east of it the later one (CET).
        ("America/New_York", "2024-11-03 01:30:00", "2024-11-03 05:30:00"),
        ("Europe/Berlin", "2024-10-27 02:30:00", "2024-10-27 01:30:00"),
        # a skipped wall clock: EST's instant 07:30Z lies in EDT, whose offset gives 06:30Z
        ("America/New_York", "2024-03-10 02:30:00", "2024-03-10 06:30:00"),
        ("America/New_York", "2024-07-01 12:00:00.123456", "2024-07-01 16:00:00.123456"),
    ],
)
def test_timestamp_follows_go_time_date(zone: str, local: str, utc: str) -> None:
    assert checksum_bytes(K.TIMESTAMP, local, zone)[4:] == utc.encode()


def test_row_crc_is_ieee_over_the_columns_in_column_id_order() -> None:
    table = table_of(
        Column("name", parse_mysql_type("varchar(10)"), column_id=2),
        Column("id", parse_mysql_type("int"), column_id=1),
    )
    data = bytes.fromhex("0100000000000000" + "020000006162")  # id, then name
    assert TableChecksum(table, time_zone="UTC").of_row(("ab", 1)) == crc32_bitwise(data)
    assert crc32_bitwise(b"123456789") == 0xCBF43926  # CRC-32's published check value


def test_nulls_add_nothing() -> None:
    both = TableChecksum(table_of(col("id", "int"), col("name", "varchar(10)")), time_zone="UTC")
    alone = TableChecksum(table_of(col("id", "int")), time_zone="UTC")
    assert both.of_row((7, None)) == alone.of_row((7,))
    assert both.of_row((None, None)) == 0


def test_of_change_by_op() -> None:
    table = table_of(col("id", "int"))
    checksum = TableChecksum(table, time_zone="UTC")
    one, two = checksum.of_row((1,)), checksum.of_row((2,))
    assert checksum.of_change(RowChange(table, Op.INSERT, 5, (1,))) == RowChecksum(one, 0)
    assert checksum.of_change(RowChange(table, Op.UPDATE, 5, (1,), (2,))) == RowChecksum(one, two)
    assert checksum.of_change(RowChange(table, Op.DELETE, 5, None, (2,))) == RowChecksum(0, two)
    # no value at all: TiCDC's mounter attaches no checksum
    assert checksum.of_change(RowChange(table, Op.INSERT, 5, (None,))) is None


def test_split_key_update_halves_carry_zeros() -> None:
    # tiflow SplitUpdateEvent: both halves share one *integrity.Checksum and zero it
    table = table_of(col("id", "int", nullable=False), key=("id",))
    checksum = TableChecksum(table, time_zone="UTC")
    halves = split_key_update(RowChange(table, Op.UPDATE, 5, (1,), (2,)), (0,))
    assert [h.op for h in halves] == [Op.DELETE, Op.INSERT]
    assert [checksum.of_change(h) for h in halves] == [RowChecksum(0, 0)] * 2


def test_vector_columns_are_refused() -> None:
    with pytest.raises(SchemaError, match="column v of db.t is a VECTOR"):
        TableChecksum(table_of(col("v", "vector(3)")), time_zone="UTC")


def test_a_value_that_does_not_fit_names_table_and_column() -> None:
    checksum = TableChecksum(table_of(col("f", "float")), time_zone="UTC")
    with pytest.raises(InputError, match=r"column f of db\.t \(float\) cannot take 1e\+300"):
        checksum.of_row((1e300,))


# every type the checksum covers (VECTOR is refused)
_COVERED = attrs.evolve(
    ALL_TYPES_TABLE, columns=tuple(c for c in ALL_TYPES_TABLE.columns if c.type.base != "vector")
)


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(all_types_rows(_COVERED), min_size=0, max_size=8),
    st.sampled_from(["UTC", "Asia/Tokyo", "America/New_York"]),
)
def test_row_path_equals_column_wise(rows: list[tuple[Any, ...]], zone: str) -> None:
    checksum = TableChecksum(_COVERED, time_zone=zone)
    columns = [[row[i] for row in rows] for i in range(len(_COVERED.columns))]
    assert checksum.of_columns(columns, len(rows)) == [checksum.of_row(r) for r in rows]


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.none() | st.integers(-128, 127),
            st.none() | st.integers(-(2**63), 2**63 - 1),
            st.none() | st.integers(0, 2**64 - 1),
            st.none() | st.booleans(),
        ),
        max_size=8,
    )
)
def test_arrow_integer_columns_equal_the_row_path(rows: list[tuple[Any, ...]]) -> None:
    # of_columns takes whole Arrow integer columns through numpy (a fast path)
    table = table_of(
        col("a", "tinyint"), col("b", "bigint"), col("c", "bigint unsigned"), col("d", "tinyint(1)")
    )
    checksum = TableChecksum(table, time_zone="UTC")
    types = [pa.int8(), pa.int64(), pa.uint64(), pa.bool_()]
    columns = [pa.array([r[i] for r in rows], t) for i, t in enumerate(types)]
    assert checksum.of_columns(columns, len(rows)) == [checksum.of_row(r) for r in rows]

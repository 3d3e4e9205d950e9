"""Simple protocol decoding: the doc's messages, schemas from BOOTSTRAP/DDL, typed values,
rows before their schema, errors, and encoder -> decoder round trips, in JSON and Avro."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import paths
from tests.support.hypothesis_profiles import examples
from ticdc_sink.codec.protocols import build_encoder, decoder_for, encode_watermark
from ticdc_sink.codec.simple.decoder import SimpleDecoder
from ticdc_sink.config import CodecConfig, EncodingFormat
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.decode import (
    DecodedBootstrap,
    DecodedDDL,
    DecodedRow,
    DecodedWatermark,
    DecoderSettings,
)
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.gotext import go_string, to_float32
from ticdc_sink.schema import Column, Index, TableSchema

GOLDEN = paths.GOLDEN / "simple"
USER_VERSION = 447984074911121426


def golden(name: str) -> bytes:
    return (GOLDEN / f"{name}.value.json").read_bytes()


def test_watermark() -> None:
    event = SimpleDecoder().decode_message(None, golden("watermark"))
    assert event == DecodedWatermark(commit_ts=447984124732375041, build_ts=1708923816911)
    assert event.describe() == "WATERMARK commitTs=447984124732375041"


def test_bootstrap_gives_the_table_and_reencodes_to_the_same_bytes() -> None:
    decoder = SimpleDecoder()
    event = decoder.decode_message(b"", golden("bootstrap"))
    assert isinstance(event, DecodedBootstrap)
    table = event.table
    assert (table.database, table.table, table.table_id, table.version) == (
        "simple",
        "new_user",
        148,
        USER_VERSION,
    )
    assert [c.name for c in table.columns] == ["id", "name", "age", "score"]
    assert table.primary_key == ("id",) and table.pk_is_handle
    assert decoder.table("simple", "new_user", USER_VERSION) == table
    again = build_encoder(CodecConfig(), table, build_ts_ms=1708924603278).encode_bootstrap()
    assert again is not None and again.value == golden("bootstrap")


@pytest.mark.parametrize("label", ["charset", "collate"])
def test_a_charset_or_collation_that_is_not_a_string_is_a_decode_error(label: str) -> None:
    value = json.loads(golden("bootstrap"))
    value["tableSchema"]["columns"][1]["dataType"][label] = []
    with pytest.raises(DecodeError, match=f"dataType.{label} is"):
        SimpleDecoder().decode_message(b"", json.dumps(value).encode())


def test_dml_before_its_schema_keeps_raw_values_and_resolves_later() -> None:
    decoder = SimpleDecoder()
    row = decoder.decode_message(b"", golden("insert"))
    assert isinstance(row, DecodedRow)
    assert not row.typed
    assert row.data == {"age": "25", "id": "1", "name": "John Doe", "score": "90.5"}
    assert "no schema yet" in row.describe()
    # The doc's DDL message holds the table before (preTableSchema, the DML's version)
    # and after the ALTER.
    ddl = decoder.decode_message(b"", golden("ddl_alter"))
    assert isinstance(ddl, DecodedDDL)
    assert ddl.type == "ALTER" and ddl.sql.startswith("ALTER TABLE `user` ADD COLUMN")
    assert ddl.table is not None and ddl.pre_table is not None
    assert ddl.table.column("createTime").type.base == "timestamp"
    typed = decoder.resolve(row)
    assert typed.typed
    assert typed.data == {"id": 1, "name": "John Doe", "age": 25, "score": 90.5}
    assert list(typed.data) == ["id", "name", "age", "score"]  # table column order
    assert decoder.decode_message(b"", golden("insert")) == typed


def test_update_and_delete_after_the_schema() -> None:
    decoder = SimpleDecoder()
    decoder.decode_message(b"", golden("ddl_alter"))
    update = decoder.decode_message(b"", golden("update"))
    assert update == DecodedRow(
        database="simple",
        table="user",
        table_id=148,
        op=Op.UPDATE,
        commit_ts=447984099186180098,
        schema_version=USER_VERSION,
        data={"id": 1, "name": "John Doe", "age": 25, "score": 95.0},
        old={"id": 1, "name": "John Doe", "age": 25, "score": 90.5},
        build_ts=1708923719184,
    )
    delete = decoder.decode_message(b"", golden("delete"))
    assert isinstance(delete, DecodedRow)
    assert delete.op is Op.DELETE and delete.data is None
    assert delete.old == {"id": 1, "name": "John Doe", "age": 25, "score": 95.0}
    assert delete.describe().startswith("DELETE simple.user commitTs=447984114259722243 old=")


def test_a_different_schema_version_is_not_used() -> None:
    decoder = SimpleDecoder()
    decoder.decode_message(b"", golden("bootstrap"))  # new_user, not user
    row = decoder.decode_message(b"", golden("insert"))
    assert isinstance(row, DecodedRow) and not row.typed


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (None, "no value"),
        (b"\x16\x00\x00", "not JSON"),
        (b"[1]", "JSON list"),
        (b'{"version":2,"type":"WATERMARK","commitTs":1}', "version is 2"),
        (b'{"version":1,"type":"NOPE","commitTs":1}', "type is 'NOPE'"),
        (b'{"version":1,"type":"WATERMARK"}', "'commitTs' is None"),
        (b'{"version":1,"type":"INSERT","commitTs":1,"data":[1]}', "data is not a JSON object"),
        (b'{"version":1,"type":"BOOTSTRAP","commitTs":0}', "tableSchema is not a JSON object"),
    ],
)
def test_malformed_messages_are_decode_errors(value: bytes | None, match: str) -> None:
    with pytest.raises(DecodeError, match=match):
        SimpleDecoder().decode_message(b"", value)


def _with_user_schema() -> SimpleDecoder:
    decoder = SimpleDecoder()
    decoder.decode_message(b"", golden("ddl_alter"))
    return decoder


def _insert(data: dict[str, Any]) -> bytes:
    message = json.loads(golden("insert"))
    message["data"] = data
    return json.dumps(message).encode()


def test_a_value_that_does_not_parse_names_the_column() -> None:
    decoder = _with_user_schema()
    with pytest.raises(DecodeError, match="column age: 'x' is not an integer"):
        decoder.decode_message(b"", _insert({"id": "1", "age": "x"}))
    with pytest.raises(DecodeError, match="column id: expected a JSON string"):
        decoder.decode_message(b"", _insert({"id": 1}))


def test_a_column_unknown_to_the_schema_is_an_error() -> None:
    with pytest.raises(DecodeError, match="columns zzz are not in the table schema"):
        _with_user_schema().decode_message(b"", _insert({"id": "1", "zzz": "1"}))


def test_missing_columns_are_skipped_as_tidb_does_for_generated_ones() -> None:
    row = _with_user_schema().decode_message(b"", _insert({"id": "1"}))
    assert isinstance(row, DecodedRow) and row.data == {"id": 1}


def test_decoder_for() -> None:
    assert isinstance(decoder_for("simple"), SimpleDecoder)
    assert isinstance(decoder_for("SIMPLE"), SimpleDecoder)
    avro = decoder_for("simple", DecoderSettings(encoding_format="avro"))
    assert isinstance(avro, SimpleDecoder) and avro.encoding_format == "avro"
    with pytest.raises(DecodeError, match="'nope' has no decoder"):
        decoder_for("nope")


def test_the_schema_cache_is_bounded() -> None:
    decoder = SimpleDecoder(max_tables=2)
    columns = (Column("a", parse_mysql_type("int")),)
    for version in (1, 2, 3):
        decoder.add_table(TableSchema("d", "t", columns, version=version))
    assert decoder.table("d", "t", 1) is None
    assert decoder.table("d", "t", 3) is not None


# --- round trips ------------------------------------------------------------------------


def _text(draw: st.DrawFn) -> str:
    return draw(st.text(st.characters(exclude_categories=("Cs",)), max_size=12))


_INT_RANGES = {
    "tinyint": 8,
    "smallint": 16,
    "mediumint": 24,
    "int": 32,
    "bigint": 64,
}


@st.composite
def _column_and_value(draw: st.DrawFn) -> tuple[str, Any, Any]:
    """(MySQL type, mounter value, expected decoded value)."""
    kind = draw(
        st.sampled_from(
            [*_INT_RANGES, "year", "float", "double", "decimal", "date", "datetime"]
            + ["timestamp", "time", "enum", "set", "bit", "json", "varchar", "varbinary"]
        )
    )
    if kind in _INT_RANGES:
        bits = _INT_RANGES[kind]
        if draw(st.booleans()):
            v = draw(st.integers(0, 2**bits - 1))
            return f"{kind} unsigned", v, v
        v = draw(st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1))
        return kind, v, v
    if kind == "year":
        v = draw(st.sampled_from([0]) | st.integers(1901, 2155))
        return kind, v, v
    if kind == "float":
        v = draw(st.floats(width=32, allow_nan=False, allow_infinity=False))
        return kind, v, to_float32(v)
    if kind == "double":
        v = draw(st.floats(allow_nan=False, allow_infinity=False))
        return kind, v, v
    if kind == "decimal":
        scale = draw(st.integers(0, 6))
        unscaled = draw(st.integers(-(10**12) + 1, 10**12 - 1))
        text = str(Decimal(unscaled).scaleb(-scale).quantize(Decimal(1).scaleb(-scale)))
        return f"decimal(18,{scale})", text, Decimal(text)
    if kind == "date":
        v = draw(st.dates()).isoformat()
        return kind, v, v
    if kind in ("datetime", "timestamp"):
        moment = draw(st.datetimes(min_value=dt.datetime(1000, 1, 1)))
        v = moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:23]
        return f"{kind}(3)", v, v
    if kind == "time":
        hours = draw(st.integers(-838, 838))
        v = f"{'-' if hours < 0 else ''}{abs(hours):02d}:{draw(st.integers(0, 59)):02d}:00"
        return kind, v, v
    if kind == "enum":
        v = draw(st.integers(0, 3))
        return "enum('a','b','c')", v, v
    if kind == "set":
        v = draw(st.integers(0, 7))
        return "set('a','b','c')", v, v
    if kind == "bit":
        v = draw(st.integers(0, 2**64 - 1))
        return "bit(64)", v, v
    if kind == "json":
        v = json.dumps({"k": _text(draw)}, separators=(", ", ": "))
        return kind, v, v
    if kind == "varchar":
        v = _text(draw)
        return "varchar(64)", v, v
    v = draw(st.binary(max_size=16))
    return "varbinary(16)", v, v


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(_column_and_value(), min_size=1, max_size=8),
    st.sampled_from(list(Op)),
    st.integers(0, 2**64 - 1),
    st.data(),
)
def test_encoder_to_decoder_round_trip(
    columns: list[tuple[str, Any, Any]], op: Op, commit_ts: int, data: st.DataObject
) -> None:
    table = TableSchema(
        "db",
        "t<&>",
        tuple(
            Column(f"c{i}", parse_mysql_type(t), column_id=i + 1)
            for i, (t, _, _) in enumerate(columns)
        ),
        indexes=(Index("c0", ("c0",), unique=True),),
        table_id=data.draw(st.integers(1, 2**40)),
        version=data.draw(st.integers(1, 2**62)),
    )
    nulls = [data.draw(st.booleans()) for _ in columns]
    row = tuple(None if null else v for null, (_, v, _) in zip(nulls, columns, strict=True))
    expected = {
        f"c{i}": None if null else e
        for i, (null, (_, _, e)) in enumerate(zip(nulls, columns, strict=True))
    }
    change = RowChange(
        table,
        op,
        commit_ts,
        row=None if op is Op.DELETE else row,
        before=None if op is Op.INSERT else row,
    )
    encoder = build_encoder(CodecConfig(), table, build_ts_ms=42)
    decoder = SimpleDecoder()
    bootstrap = encoder.encode_bootstrap()
    assert bootstrap is not None
    decoded_table = decoder.decode_message(bootstrap.key, bootstrap.value)
    assert isinstance(decoded_table, DecodedBootstrap)
    # The decoded schema encodes to the same bootstrap bytes.
    again = build_encoder(CodecConfig(), decoded_table.table, build_ts_ms=42).encode_bootstrap()
    assert again is not None and again.value == bootstrap.value

    message = encoder.encode_row(change)
    event = decoder.decode_message(message.key, message.value)
    assert isinstance(event, DecodedRow) and event.typed
    assert (event.database, event.table, event.table_id) == ("db", "t<&>", table.table_id)
    assert (event.op, event.commit_ts, event.schema_version) == (op, commit_ts, table.version)
    assert event.build_ts == 42
    assert event.data == (None if op is Op.DELETE else expected)
    assert event.old == (None if op is Op.INSERT else expected)

    mark = encode_watermark(CodecConfig(), commit_ts, build_ts_ms=42)
    assert mark is not None
    assert decoder.decode_message(mark.key, mark.value) == DecodedWatermark(commit_ts, 42)


# --- Avro encoding ----------------------------------------------------------------------

AVRO = CodecConfig(encoding_format=EncodingFormat.AVRO)
_NAMES = ["watermark", "bootstrap", "insert", "ddl_alter", "insert", "update", "delete"]


def golden_avro(name: str) -> bytes:
    return (GOLDEN / f"{name}.value.avro").read_bytes()


def test_avro_goldens_decode_to_the_same_events_as_the_json_ones() -> None:
    json_decoder = SimpleDecoder()
    avro_decoder = SimpleDecoder(encoding_format="avro")
    for name in _NAMES:  # the first insert comes before its schema: raw, then resolved
        from_json = json_decoder.decode_message(b"", golden(name))
        from_avro = avro_decoder.decode_message(b"", golden_avro(name))
        if isinstance(from_json, DecodedRow) and not from_json.typed:
            assert isinstance(from_avro, DecodedRow) and not from_avro.typed
            assert from_avro.data == {"age": 25, "id": 1, "name": "John Doe", "score": 90.5}
            assert avro_decoder.resolve(from_avro) == from_avro  # still no schema
            continue
        assert from_avro == from_json, name


def test_an_avro_row_before_its_schema_resolves_later() -> None:
    decoder = SimpleDecoder(encoding_format="AVRO")
    row = decoder.decode_message(b"", golden_avro("update"))
    assert isinstance(row, DecodedRow) and not row.typed
    decoder.decode_message(b"", golden_avro("ddl_alter"))
    typed = decoder.resolve(row)
    assert typed.typed and typed.old == {"id": 1, "name": "John Doe", "age": 25, "score": 90.5}


def test_encoding_format_is_checked() -> None:
    with pytest.raises(DecodeError, match="'xml' is not one of .*use json or avro"):
        SimpleDecoder(encoding_format="xml")


@pytest.mark.parametrize(
    ("encoding", "value", "match"),
    [
        ("json", b"\x16\x06\x06\x02", "not JSON"),  # what it looks like: decode.sniff
        ("avro", golden("insert"), "starts with 7b, not with 0x16"),
        ("avro", b"", "starts with nothing"),
        ("avro", b"\x16\x06\x06\x02", "not a Simple Avro message \\(EOFError"),
        ("avro", golden_avro("watermark") + b"\x00", "1 bytes after the Simple Avro message"),
        ("avro", b"\x16\x00\x00\x04\x02\x02", "version is 2"),
    ],
)
def test_malformed_avro_is_a_decode_error(encoding: str, value: bytes, match: str) -> None:
    with pytest.raises(DecodeError, match=match):
        SimpleDecoder(encoding_format=encoding).decode_message(b"", value)


def test_a_schema_whose_names_or_types_are_not_utf8_is_a_decode_error() -> None:
    # Found by tests/unit/decode/test_fuzz.py: the type reached the read's Arrow metadata.
    bootstrap = golden_avro("bootstrap")
    at = bootstrap.index(b"varchar")
    broken = bootstrap[:at] + b"\x80" + bootstrap[at + 1 :]
    with pytest.raises(DecodeError, match="a name or type is not valid UTF-8"):
        SimpleDecoder(encoding_format="avro").decode_message(b"", broken)


def test_avro_invalid_utf8_text_reads_as_json_would_show_it() -> None:
    table = TableSchema(
        "d", "t", (Column("v", parse_mysql_type("varchar(8)"), column_id=1),), version=3
    )
    change = RowChange(table, Op.INSERT, 1, (b"a\xffb\xc3",))
    decoded = []
    for config in (CodecConfig(), AVRO):
        decoder = SimpleDecoder(encoding_format=str(config.encoding_format))
        decoder.add_table(table)
        message = build_encoder(config, table, build_ts_ms=1).encode_row(change)
        decoded.append(decoder.decode_message(message.key, message.value))
    assert decoded[0] == decoded[1]
    assert isinstance(decoded[1], DecodedRow) and decoded[1].data == {"v": "a\ufffdb\ufffd"}


def test_avro_table_schemas_read_back_as_the_json_ones() -> None:
    table = TableSchema(
        "d",
        "t",
        (
            Column("k", parse_mysql_type("bigint unsigned"), nullable=False, column_id=1),
            Column("b", parse_mysql_type("bit(12)"), default="300", column_id=3),
            Column("t", parse_mysql_type("time(2)"), column_id=2),
            Column("ts", parse_mysql_type("timestamp(6)"), default="CURRENT_TIMESTAMP"),
            Column("dt", parse_mysql_type("datetime"), column_id=4),
            Column("z", parse_mysql_type("decimal(9,0) unsigned zerofill"), column_id=5),
            Column("e", parse_mysql_type("enum('x','y')"), default="y", column_id=6),
            Column("y", parse_mysql_type("year"), column_id=7),
            Column("f", parse_mysql_type("double(8,3)"), column_id=8),
            Column("c", parse_mysql_type("char(4) character set latin1"), column_id=9),
        ),
        indexes=(
            Index("PRIMARY", ("k",), unique=True, primary=True),
            Index("i", ("t", "dt")),
        ),
        table_id=12,
        version=2**64 - 1,
    )
    tables = []
    for config in (CodecConfig(), AVRO):
        bootstrap = build_encoder(config, table, build_ts_ms=1).encode_bootstrap()
        assert bootstrap is not None
        decoder = SimpleDecoder(encoding_format=str(config.encoding_format))
        event = decoder.decode_message(bootstrap.key, bootstrap.value)
        assert isinstance(event, DecodedBootstrap)
        again = build_encoder(config, event.table, build_ts_ms=1).encode_bootstrap()
        assert again is not None and again.value == bootstrap.value
        tables.append(event.table)
    assert tables[0] == tables[1]
    assert tables[1].column("b").default == "300"
    assert tables[1].column("t").type.fsp == 2 and tables[1].column("ts").type.fsp == 6
    assert tables[1].version == 2**64 - 1


def test_avro_ddl_reads_as_the_json_ddl() -> None:
    from ticdc_sink.codec.simple.encoder import encode_ddl

    from_json = SimpleDecoder().decode_message(None, golden("ddl_alter"))
    assert isinstance(from_json, DecodedDDL)
    for pre in (from_json.pre_table, None):
        message = encode_ddl(
            AVRO,
            from_json.type,
            from_json.sql,
            from_json.commit_ts,
            build_ts_ms=from_json.build_ts,
            table=from_json.table,
            pre_table=pre,
        )
        event = SimpleDecoder(encoding_format="avro").decode_message(None, message.value)
        assert event == attrs.evolve(from_json, pre_table=pre)


def _text_bytes(draw: st.DrawFn) -> tuple[bytes, str]:
    raw = draw(st.binary(max_size=12))
    return raw, go_string(raw)


@st.composite
def _avro_column_and_value(draw: st.DrawFn) -> tuple[str, Any, Any]:
    """Every type of _column_and_value, plus the rest of TiDB's string and binary types,
    text given as bytes, VECTOR and BIGINT UNSIGNED at its edges."""
    extra = draw(st.integers(0, 5))
    if extra == 0:
        raw, text = _text_bytes(draw)
        return draw(st.sampled_from(["text", "char(12)", "longtext"])), raw, text
    if extra == 1:
        v = draw(st.binary(max_size=12))
        return draw(st.sampled_from(["blob", "binary(12)", "longblob", "tinyblob"])), v, v
    if extra == 2:
        v = "[" + ",".join(str(draw(st.integers(-9, 9))) for _ in range(3)) + "]"
        return "vector(3)", v, v
    if extra == 3:
        v = draw(st.sampled_from([0, 2**63 - 1, 2**63, 2**64 - 1]))
        return "bigint unsigned", v, v
    return draw(_column_and_value())


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(_avro_column_and_value(), min_size=1, max_size=8),
    st.sampled_from(list(Op)),
    st.integers(0, 2**64 - 1),
    st.data(),
)
def test_avro_encoder_to_decoder_round_trip(
    columns: list[tuple[str, Any, Any]], op: Op, commit_ts: int, data: st.DataObject
) -> None:
    table = TableSchema(
        "db",
        "t<&>",
        tuple(
            Column(f"c{i}", parse_mysql_type(t), column_id=i + 1)
            for i, (t, _, _) in enumerate(columns)
        ),
        indexes=(Index("c0", ("c0",), unique=True),),
        table_id=data.draw(st.integers(1, 2**40)),
        version=data.draw(st.integers(1, 2**64 - 1)),
    )
    nulls = [data.draw(st.booleans()) for _ in columns]
    row = tuple(None if null else v for null, (_, v, _) in zip(nulls, columns, strict=True))
    expected = {
        f"c{i}": None if null else e
        for i, (null, (_, _, e)) in enumerate(zip(nulls, columns, strict=True))
    }
    change = RowChange(
        table,
        op,
        commit_ts,
        row=None if op is Op.DELETE else row,
        before=None if op is Op.INSERT else row,
    )
    events = []
    for config in (AVRO, CodecConfig()):
        encoder = build_encoder(config, table, build_ts_ms=42)
        decoder = SimpleDecoder(encoding_format=str(config.encoding_format))
        bootstrap = encoder.encode_bootstrap()
        assert bootstrap is not None
        decoded_table = decoder.decode_message(bootstrap.key, bootstrap.value)
        assert isinstance(decoded_table, DecodedBootstrap)
        again = build_encoder(config, decoded_table.table, build_ts_ms=42).encode_bootstrap()
        assert again is not None and again.value == bootstrap.value
        message = encoder.encode_row(change)
        event = decoder.decode_message(message.key, message.value)
        assert isinstance(event, DecodedRow) and event.typed
        mark = encode_watermark(config, commit_ts, build_ts_ms=42)
        assert mark is not None
        assert decoder.decode_message(mark.key, mark.value) == DecodedWatermark(commit_ts, 42)
        events.append((decoded_table.table, event))
    (avro_table, avro_event), (json_table, json_event) = events
    assert avro_table == json_table
    assert avro_event == json_event  # the same typed values from either encoding
    assert (avro_event.database, avro_event.table, avro_event.table_id) == (
        "db",
        "t<&>",
        table.table_id,
    )
    assert (avro_event.op, avro_event.commit_ts) == (op, commit_ts)
    assert avro_event.schema_version == table.version and avro_event.build_ts == 42
    assert avro_event.data == (None if op is Op.DELETE else expected)
    assert avro_event.old == (None if op is Op.INSERT else expected)

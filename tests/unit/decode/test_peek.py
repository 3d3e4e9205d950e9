"""The decoders' peeks (`decode.peek`, `peek_row`) and Simple's `is_row`: for every
message the writer's encoders write (rows of tables and columns named with quotes,
backslashes, unicode and the words WATERMARK and DDL, of every type the encoders render;
BOOTSTRAP, DDL and watermark messages; Simple rows of a schema the decoder has not met), a
peek is None or agrees with the full decode: op, commit ts, table, schema version, whether
the values are typed, and the images a Simple row is compared by; `is_row` is True for
each row and no other message. The same for the golden messages of TiCDC's tests and
documents, and for mutated messages that still decode; a peek never raises."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import paths
from tests.support.hypothesis_profiles import examples
from tests.support.read_log import protocol_messages
from tests.support.schemas import ALL_TYPES_TABLE
from tests.support.strategies import all_types_rows, json_paths
from ticdc_sink.codec.choices import EncodingFormat
from ticdc_sink.codec.protocols import build_encoder, decoder_for, encode_watermark
from ticdc_sink.codec.simple.encoder import encode_ddl
from ticdc_sink.config import CodecConfig
from ticdc_sink.decode import DecodedRow, Decoder, DecoderSettings, decode_record
from ticdc_sink.decode.peek import RowPeek
from ticdc_sink.errors import DecodeError
from ticdc_sink.events import Op
from ticdc_sink.schema import TableSchema

GOLDEN = paths.GOLDEN
Record = tuple[bytes | None, bytes | None]

#: (protocol, the writer's options) of every decoder with a peek.
WRITERS = [
    ("simple", {}),
    ("simple", {"encoding_format": EncodingFormat.AVRO}),
    ("canal-json", {"enable_tidb_extension": True}),
    ("canal-json", {"enable_tidb_extension": False}),
    ("debezium", {"enable_tidb_extension": True}),
    ("debezium", {"enable_tidb_extension": True, "debezium_disable_schema": True}),
    ("debezium", {"enable_tidb_extension": True, "debezium_output_old_value": False}),
]
NAMES = st.text(
    st.sampled_from(['"', "\\", "é", "表", "\U0001f600", "a", "_", " ", "/", "\n"]), max_size=4
).map(lambda s: s + "x") | st.sampled_from(["WATERMARK", "DDL", "BOOTSTRAP", '"type":"DDL"'])


def reader(protocol: str, options: dict[str, Any]) -> Decoder:
    """The decoder of what a writer of `options` writes (Simple's encoding among them)."""
    encoding = options.get("encoding_format", EncodingFormat.JSON)
    return decoder_for(protocol, DecoderSettings(encoding_format=str(encoding)))


def agrees(peek: RowPeek | None, decoded: Any) -> bool:
    """`peek` is None or says of the message what its full decode says."""
    if peek is None:
        return True
    if not isinstance(decoded, DecodedRow):
        return False
    same = (peek.op, peek.commit_ts, peek.database, peek.table, peek.schema_version) == (
        decoded.op,
        decoded.commit_ts,
        decoded.database,
        decoded.table,
        decoded.schema_version,
    )
    images = decoded.raw or (decoded.data, decoded.old)
    return same and peek.typed == decoded.typed and peek.images in (None, images)


def a_row_if_said(decoder: Any, value: bytes | None, event: Any) -> bool:
    """Whether the decoder's `is_row` (Simple's), where it says a message is a row, is
    right about `event`, the message decoded."""
    is_row = getattr(decoder, "is_row", None)
    return is_row is None or not is_row(value) or isinstance(event, DecodedRow)


def check(decoder: Any, records: list[Record]) -> int:
    """Peek, then decode, each record in order (a Simple BOOTSTRAP teaches the decoder a
    schema); the number of rows the peek read. `is_row`, where the decoder has it, is
    True for each row and for no other message."""
    peeked = 0
    for key, value in records:
        peek = decoder.peek_row(key, value)
        said = getattr(decoder, "is_row", lambda value: None)(value)
        events = decode_record(decoder, key, value)
        assert len(events) == 1 and agrees(peek, events[0]), (value, peek, events)
        assert said in (None, isinstance(events[0], DecodedRow)), (value, said, events)
        peeked += peek is not None
    return peeked


@st.composite
def named_table(draw: Any) -> tuple[TableSchema, TableSchema]:
    """Some columns of ALL_TYPES_TABLE (the key among them), and the same table under
    drawn database, table and column names."""
    count = len(ALL_TYPES_TABLE.columns)
    keep = sorted(draw(st.sets(st.integers(1, count - 1), max_size=count - 1)))
    columns = (ALL_TYPES_TABLE.columns[0], *(ALL_TYPES_TABLE.columns[i] for i in keep))
    names = draw(st.lists(NAMES, min_size=len(columns), max_size=len(columns), unique=True))
    renamed = [
        columns[0],
        *(attrs.evolve(c, name=n) for c, n in zip(columns[1:], names[1:], strict=True)),
    ]
    some = attrs.evolve(ALL_TYPES_TABLE, columns=columns)
    named = attrs.evolve(some, database=draw(NAMES), table=draw(NAMES), columns=tuple(renamed))
    return some, named


def _messages(protocol: str, options: dict[str, Any], data: Any, bootstrap: bool) -> list[Record]:
    some, table = data.draw(named_table(), label="table")
    rows = data.draw(st.lists(all_types_rows(some), min_size=2, max_size=2), label="rows")
    commit_ts = data.draw(st.sampled_from([1, 10, 1 << 62, (1 << 63) - 1]), label="ts")
    config = CodecConfig(protocol=protocol, **options)
    changes = [
        (Op.INSERT, commit_ts, rows[0], None),
        (Op.UPDATE, commit_ts, rows[1], rows[0]),
        (Op.DELETE, commit_ts, None, rows[1]),
    ]
    records = protocol_messages(config, table, changes, watermark=commit_ts)
    encoder = build_encoder(config, table, build_ts_ms=1, topic="t")
    first = encoder.encode_bootstrap() if bootstrap else None
    if first is not None:
        records.insert(0, (first.key, first.value))
    ddl = getattr(encoder, "encode_ddl", None)
    if ddl is not None:
        message = ddl(None, "CREATE TABLE t (id int)", commit_ts)
        records.append((message.key, message.value))
    elif bootstrap:
        message = encode_ddl(
            config, "CREATE", "CREATE TABLE t", commit_ts, build_ts_ms=1, table=table
        )
        records.append((message.key, message.value))
    return records


@pytest.mark.parametrize(("protocol", "options"), WRITERS, ids=lambda w: str(w))
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), bootstrap=st.booleans())
def test_a_peek_of_what_the_writer_encodes_agrees_with_the_full_decode(
    protocol: str, options: dict[str, Any], data: Any, bootstrap: bool
) -> None:
    records = _messages(protocol, options, data, bootstrap)
    decoder = reader(protocol, options)
    peeked = check(decoder, records)
    # The peek is for the rows it reads, not an empty answer: with the commit ts in the
    # message (canal-json's TiDB extension), every row.
    assert peeked == 3 or (protocol == "canal-json" and not options["enable_tidb_extension"])


def test_a_peek_reads_the_three_row_kinds_of_each_protocol() -> None:
    # Not vacuous: the agreement test above holds trivially if a peek gave None always.
    values = {
        "simple": b'{"version":1,"database":"d","table":"t","tableID":1,"type":"DELETE",'
        b'"commitTs":5,"buildTs":1,"schemaVersion":3,"old":{"id":"1"}}',
        "canal-json": b'{"id":0,"database":"d","table":"t","pkNames":["id"],"isDdl":false,'
        b'"type":"UPDATE","es":0,"ts":1,"sql":"","sqlType":{"id":4},"mysqlType":{"id":"int"},'
        b'"old":[{"id":"1"}],"data":[{"id":"2"}],"_tidb":{"commitTs":5}}',
        "debezium": b'{"payload":{"source":{"version":"2.4.0.Final","connector":"TiCDC",'
        b'"name":"default","ts_ms":0,"snapshot":"false","db":"d","table":"t","server_id":0,'
        b'"gtid":null,"file":"","pos":0,"row":0,"thread":0,"query":null,"commit_ts":5,'
        b'"cluster_id":"default"},"ts_ms":1,"transaction":null,"op":"c","before":null,'
        b'"after":{"id":1}}}',
    }
    found = {p: decoder_for(p).peek_row(None, v) for p, v in values.items()}
    assert {p: (r.op, r.commit_ts, r.database, r.table, r.typed) for p, r in found.items()} == {
        "simple": (Op.DELETE, 5, "d", "t", False),
        "canal-json": (Op.UPDATE, 5, "d", "t", True),
        "debezium": (Op.INSERT, 5, "d", "t", False),
    }
    assert found["simple"].images == (None, {"id": "1"})


def _golden(directory: str, suffix: str = "json") -> list[Record]:
    out = []
    for path in sorted((GOLDEN / directory).glob(f"*.value.{suffix}")):
        key_path = path.with_name(path.name.replace(".value.", ".key."))
        key = key_path.read_bytes() if key_path.exists() else None
        out.append((key, path.read_bytes()))
    return out


@pytest.mark.parametrize(
    ("protocol", "options"),
    [(p, {}) for p in ("simple", "canal-json", "debezium")]
    + [("simple", {"encoding_format": EncodingFormat.AVRO})],
    ids=str,
)
def test_a_peek_of_a_golden_message_agrees_with_the_full_decode(
    protocol: str, options: dict[str, Any]
) -> None:
    suffix = str(options.get("encoding_format", "json"))
    records = _golden(protocol.replace("-", "_"), suffix)
    assert records
    decoder = reader(protocol, options)
    peeked = 0
    for key, value in records:
        peek = decoder.peek_row(key, value)
        try:
            events = decode_record(decoder, key, value)
        except DecodeError:
            assert peek is None, value
            continue
        assert len(events) == 1 and agrees(peek, events[0]), (value, peek)
        assert a_row_if_said(decoder, value, events[0]), value
        peeked += peek is not None
    assert peeked or protocol != "simple"  # Simple's golden rows come after their schema


JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([-1, 1 << 63, 1 << 64, 10**30]),
    st.text(max_size=6),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@st.composite
def mutated(draw: Any, value: bytes) -> bytes:
    """`value` with a JSON node replaced, a key removed or added again at the end, or its
    bytes cut or flipped (the only change of a value that is not JSON: Simple Avro's)."""
    try:
        document = json.loads(value)
    except ValueError:
        document = None
    kinds = ["node", "node", "again", "bytes"] if document is not None else ["bytes"]
    kind = draw(st.sampled_from(kinds))
    if kind == "bytes":
        out = bytearray(value)
        at = draw(st.integers(0, len(out) - 1))
        if draw(st.booleans()):
            del out[at:]
        else:
            out[at] = draw(st.integers(0, 255))
        return bytes(out)
    path = draw(st.sampled_from(json_paths(document)[1:]))
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    text = json.dumps(document, separators=(",", ":"), ensure_ascii=False)
    if kind == "again" and isinstance(parent, dict):  # a duplicate key: the last one wins
        repeated = json.dumps({path[-1]: draw(JSON_VALUES)}, separators=(",", ":"))
        return (text[:-1] + "," + repeated[1:]).encode() if parent is document else text.encode()
    if isinstance(parent, dict) and draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(JSON_VALUES)
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()


#: Simple (both encodings), canal-json and debezium with the TiDB extension, debezium
#: without its schema part.
MUTATED = [WRITERS[0], WRITERS[1], WRITERS[2], WRITERS[4], WRITERS[5]]


@pytest.mark.parametrize(("protocol", "options"), MUTATED, ids=str)
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_peek_of_a_mutated_message_never_raises_and_agrees_when_it_decodes(
    protocol: str, options: dict[str, Any], data: Any
) -> None:
    records = _messages(protocol, options, data, bootstrap=True)
    decoder = reader(protocol, options)
    for key, value in records[:1]:  # a Simple BOOTSTRAP
        decode_record(decoder, key, value)
    key, value = data.draw(st.sampled_from(records), label="record")
    assert value is not None
    value = data.draw(mutated(value), label="value")
    peek = decoder.peek_row(key, value)
    try:
        events = decode_record(decoder, key, value)
    except DecodeError:
        return  # a value the tasks' decode refuses; the peek may read its envelope
    assert len(events) == 1 and agrees(peek, events[0]), (value, peek, events)
    assert a_row_if_said(decoder, value, events[0]), (value, events)


def test_a_watermark_is_never_a_row() -> None:
    for protocol, options in WRITERS:
        config = CodecConfig(protocol=protocol, **options)
        mark = encode_watermark(config, 7, build_ts_ms=1)
        if mark is not None:
            assert reader(protocol, options).peek_row(mark.key, mark.value) is None

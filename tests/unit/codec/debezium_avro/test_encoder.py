"""protocol=debezium-avro (pingcap/ticdc `pkg/sink/codec/debezium/avro.go`, ticdc#5475): the
registered schemas against the golden file (tests/golden/debezium_avro/SOURCE.md), TiCDC's
own test assertions (`avro_test.go` TestDebeziumConfluentAvroEncodeRowEvent), and the
encoder -> decoder round trip."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from typing import Any

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import paths
from tests.support.fake_registry import FakeRegistry
from tests.support.hypothesis_profiles import examples
from tests.support.schemas import table_from_ddl
from ticdc_sink.codec.protocols import build_encoder, decoder_for, protocol_spec
from ticdc_sink.config import CodecConfig, Protocol
from ticdc_sink.decode import DecoderSettings
from ticdc_sink.errors import InputError
from ticdc_sink.events import Op, RowChange

GOLDEN = paths.GOLDEN / "debezium_avro" / "ticdc_foo.json"
FOO = table_from_ddl(
    """create table foo(id int primary key, name varchar(16), bin varbinary(16),
    price decimal(10, 4), ubig bigint unsigned, v bigint null)"""
)
TS = 449_000_000_000 << 18


def config(**kwargs: Any) -> CodecConfig:
    options = {"debezium_cluster_name": "dbserver1", **kwargs}
    return CodecConfig(protocol=Protocol("debezium-avro"), **options)


def encoder(cfg: CodecConfig, table: Any = FOO, registry: Any = None) -> Any:
    return build_encoder(
        cfg, table, build_ts_ms=1_700_000_000_000, topic="dbserver1.test.foo", registry=registry
    )


def read(registry: FakeRegistry, data: bytes) -> Any:
    assert data[0] == 0
    schema_id = int.from_bytes(data[1:5], "big")
    schema = fastavro.parse_schema(json.loads(registry.schema_text(schema_id)))
    return fastavro.schemaless_reader(io.BytesIO(data[5:]), schema, None)


def test_schemas_are_the_golden_ones() -> None:
    golden = json.loads(GOLDEN.read_text())
    enc = encoder(config(avro_bigint_unsigned_handling_mode="string"))
    assert enc.key_schema == json.dumps(golden["key"], separators=(",", ":"))
    assert enc.value_schema == json.dumps(golden["value"], separators=(",", ":"))


def test_ticdc_encode_row_event_assertions() -> None:
    # TestDebeziumConfluentAvroEncodeRowEvent: insert (1, 'alice', x'010203', 12.3400,
    # 18446744073709551615, null), bigint-unsigned-handling-mode=string, cluster dbserver1.
    registry = FakeRegistry()
    enc = encoder(config(avro_bigint_unsigned_handling_mode="string"), registry=registry)
    row = (1, "alice", b"\x01\x02\x03", "12.3400", 2**64 - 1, None)
    message = enc.encode_row(RowChange(FOO, Op.INSERT, TS, row))
    assert message.key is not None and message.value is not None
    assert message.key[0] == 0 and message.value[0] == 0
    assert read(registry, message.key) == {"id": 1}
    value = read(registry, message.value)
    assert value["op"] == "c" and value["before"] is None and "transaction" not in value
    assert value["after"] == {
        "id": 1,
        "name": "alice",
        "bin": b"\x01\x02\x03",
        "price": Decimal("12.3400"),
        "ubig": "18446744073709551615",
        "v": None,
    }
    source = value["source"]
    assert (source["db"], source["table"], source["name"]) == ("test", "foo", "dbserver1")
    assert source["snapshot"] is None and source["thread"] is None
    assert "start_ts" not in source and source["commit_ts"] == TS
    assert source["ts_ms"] == TS >> 18 and value["ts_ms"] == 1_700_000_000_000
    for part in ('"name":"fooEnvelope"', '"name":"foo"', '"name":"Source"'):
        assert part in enc.value_schema
    assert '"logicalType":"decimal"' in enc.value_schema
    assert "transaction" not in enc.value_schema and "start_ts" not in enc.value_schema
    # subjects: TiCDC's topic strategy, <topic>-key and <topic>-value
    assert [c[0] for c in registry.calls] == ["dbserver1.test.foo"] * 2


def test_names_are_sanitised() -> None:
    # TestDebeziumConfluentAvroSanitizesFullNameAndUnionBranch: db-server / test-db / foo-bar
    table = table_from_ddl("create table `foo-bar`(id int primary key)", database="test-db")
    enc = encoder(config(debezium_cluster_name="db-server"), table)
    assert '"name":"foo_barEnvelope"' in enc.value_schema
    assert '"namespace":"db_server.test_db"' in enc.value_schema
    assert '"name":"foo_bar"' in enc.value_schema


def test_update_and_delete_images() -> None:
    registry = FakeRegistry()
    enc = encoder(config(), registry=registry)
    old, new = (1, "a", None, None, None, None), (1, "b", None, None, None, 7)
    update = read(registry, enc.encode_row(RowChange(FOO, Op.UPDATE, TS, new, old)).value)
    assert (update["op"], update["before"]["name"], update["after"]["v"]) == ("u", "a", 7)
    delete = read(registry, enc.encode_row(RowChange(FOO, Op.DELETE, TS, None, old)).value)
    assert (delete["op"], delete["after"], delete["before"]["name"]) == ("d", None, "a")
    no_old = encoder(config(debezium_output_old_value=False), registry=registry)
    update = read(registry, no_old.encode_row(RowChange(FOO, Op.UPDATE, TS, new, None)).value)
    assert update["before"] is None
    with pytest.raises(InputError, match="debezium-output-old-value"):
        enc.encode_row(RowChange(FOO, Op.UPDATE, TS, new, None))


def test_unsigned_bigint_above_long_is_refused_in_long_mode() -> None:
    enc = encoder(config(), registry=FakeRegistry())
    row = (1, None, None, None, 2**63, None)
    with pytest.raises(InputError, match="ubig.*overflows avro long"):
        enc.encode_row(RowChange(FOO, Op.INSERT, TS, row))


def test_spec() -> None:
    spec = protocol_spec("debezium-avro")
    assert spec.needs_registry and not spec.ddl and spec.owns("avro-decimal-handling-mode")


ROUND_TRIP = table_from_ddl(
    """create table t(id bigint primary key, s varchar(20), b varbinary(20),
    d decimal(20, 5), u bigint unsigned, f double, e enum('x','y'), dt date, bt bit(12))"""
)


@settings(max_examples=examples(60), deadline=None)
@given(
    st.tuples(
        st.integers(-(2**63), 2**63 - 1),
        st.none() | st.text(max_size=20),
        st.none() | st.binary(max_size=20),
        st.none() | st.decimals(-(10**15) + 1, 10**15 - 1, places=5).map(str),
        st.none() | st.integers(0, 2**64 - 1),
        st.none() | st.floats(allow_nan=False, allow_infinity=False),
        st.none() | st.integers(1, 2),
        st.none() | st.sampled_from(["2020-01-02", "1999-12-31"]),
        st.none() | st.integers(0, 2**12 - 1),
    ),
    st.sampled_from(["precise", "string"]),
)
def test_round_trip(row: tuple[Any, ...], decimal_mode: str) -> None:
    registry = FakeRegistry()
    cfg = config(
        enable_tidb_extension=True,
        avro_decimal_handling_mode=decimal_mode,
        avro_bigint_unsigned_handling_mode="string",
    )
    enc = encoder(cfg, ROUND_TRIP, registry)
    message = enc.encode_row(RowChange(ROUND_TRIP, Op.INSERT, TS, row))
    decoder = decoder_for("debezium-avro", DecoderSettings(schema_for_id=registry.schema_text))
    event = decoder.decode_message(message.key, message.value)
    expected = dict(zip([c.name for c in ROUND_TRIP.columns], row, strict=True))
    if expected["d"] is not None:
        expected["d"] = Decimal(expected["d"])
    assert event.op is Op.INSERT and event.commit_ts == TS
    assert event.data == expected
    table = decoder.row_table(message.key, message.value)
    assert table is not None and [c.name for c in table.columns] == list(expected)
    assert table.primary_key == ("id",)

"""canal-json `output-row-key` (pingcap/ticdc v26.3): `_tidb.rowkey`, TiDB's record key of
the row, base64; TiCDC's TestRowKey and tidb's tablecodec keys (tests/golden/canal_json/
row_keys.json), where it goes in the message, which tables have one, the option's sources,
and reading such messages back."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import attrs
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support import paths
from tests.support.large_messages import MemoryStore
from tests.support.read_log import FakeTopicLog, protocol_messages, table
from ticdc_sink.codec.canal_json import CanalJsonEncoder
from ticdc_sink.codec.canal_json.decoder import CanalJsonDecoder
from ticdc_sink.codec.row_key import row_key, row_keys_base64
from ticdc_sink.config import CodecConfig, LargeMessageHandleOption, Protocol, SinkConfig
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.errors import ConfigError, InputError, SchemaError
from ticdc_sink.events import Op, RowChange, split_key_update
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.scan import read_range
from ticdc_sink.schema import Column, Index, TableSchema

GOLDEN = paths.GOLDEN / "canal_json"
VECTORS = json.loads((GOLDEN / "row_keys.json").read_text())
ROW_KEY = CodecConfig(protocol=Protocol.CANAL_JSON, enable_tidb_extension=True, output_row_key=True)
BASE = {"kafka.bootstrap.servers": "b:9092", "topic": "t", "protocol": "canal-json"}


def _table(*columns: tuple[str, str], pk: tuple[str, ...] = ("id",), **kwargs: Any) -> TableSchema:
    cols = tuple(
        Column(name, parse_mysql_type(text), nullable=name not in pk) for name, text in columns
    )
    indexes = (Index("PRIMARY", pk, unique=True, primary=True),) if pk else ()
    return TableSchema("test", "t", cols, indexes, **kwargs)


def _tidb(value: bytes | None) -> dict[str, Any]:
    assert value is not None
    return json.loads(value)["_tidb"]


def _key(table_id: int, handle: int) -> str:
    """The key as tests/golden/canal_json/row_keys.json states the rule, written apart."""
    mask, sign = (1 << 64) - 1, 1 << 63
    raw = b"t" + ((table_id & mask) ^ sign).to_bytes(8, "big")
    raw += b"_r" + ((handle & mask) ^ sign).to_bytes(8, "big")
    return base64.b64encode(raw).decode()


# -- the keys -------------------------------------------------------------------------------


@pytest.mark.parametrize("vector", VECTORS["keys"], ids=lambda v: v["case"].split(":")[0])
def test_keys_are_tidbs_record_keys(vector: dict[str, Any]) -> None:
    key = row_key(vector["table_id"], vector["handle"])
    assert key.hex() == vector["hex"]
    assert base64.b64encode(key).decode() == vector["base64"]
    assert row_keys_base64(vector["table_id"], [vector["handle"]]).to_pylist() == [vector["base64"]]


@given(
    table_id=st.integers(-(1 << 63), (1 << 63) - 1),
    handles=st.lists(st.integers(-(1 << 63), (1 << 63) - 1), max_size=20),
)
def test_column_wise_keys_are_the_row_keys(table_id: int, handles: list[int]) -> None:
    expected = [base64.b64encode(row_key(table_id, h)).decode() for h in handles]
    assert row_keys_base64(table_id, handles).to_pylist() == expected
    assert row_keys_base64(table_id, pa.array(handles, pa.int64())).to_pylist() == expected
    assert [_key(table_id, h) for h in handles] == expected


def test_an_unsigned_bigint_handle_is_the_int64_of_its_bits() -> None:
    # TiDB keeps a BIGINT UNSIGNED handle as kv.IntHandle(int64(u)).
    for value, signed in ((1 << 64) - 1, -1), (1 << 63, -(1 << 63)), (5, 5):
        assert row_key(9, value) == row_key(9, signed)
    unsigned = pa.array([(1 << 64) - 1, 1 << 63, 5], pa.uint64())
    assert row_keys_base64(9, unsigned).to_pylist() == [
        _key(9, -1),
        _key(9, -(1 << 63)),
        _key(9, 5),
    ]


@pytest.mark.parametrize("bad", [None, "1", 1.0, 1 << 64, -(1 << 63) - 1])
def test_a_handle_that_is_no_64_bit_integer_is_refused(bad: Any) -> None:
    with pytest.raises((TypeError, OverflowError)):
        row_key(1, bad)
    with pytest.raises((TypeError, OverflowError)):
        row_keys_base64(1, [1, bad])


# -- the messages ---------------------------------------------------------------------------


def test_ticdcs_test_row_key() -> None:
    # pingcap/ticdc canal_json_test.go TestRowKey: its table, row and options.
    case = VECTORS["ticdc_test_row_key"]
    types = ["int", "tinyint", "tinyint unsigned", "smallint", "smallint unsigned"]
    types += ["mediumint", "mediumint unsigned", "int", "int unsigned", "bigint", "bigint unsigned"]
    names = ["id", *"abcdefghij"]
    assert all(f"{n} {t}" in case["ddl"] for n, t in zip(names, types, strict=True))
    t = _table(*zip(names, types, strict=True), table_id=112)
    options = {**BASE, **case["options"], "database": "test", "table": "t"}
    config = SinkConfig.from_options(options).codec
    assert config.output_row_key and config.content_compatible and config.enable_tidb_extension
    commit_ts = 449_000_000_000_000_000
    message = CanalJsonEncoder(config, t, build_ts_ms=1).encode_row(
        RowChange(t, Op.INSERT, commit_ts, tuple(case["row"]))
    )
    tidb = _tidb(message.value)
    assert tidb["commitTs"] != 0
    assert tidb["rowkey"] == _key(112, case["handle"])


def test_the_row_key_is_the_last_field_of_tidb() -> None:
    # The docs' INSERT of test.tp_int (id 2) with the row key of table 1: tidb's
    # TestTableCodec key, appended in `_tidb` as pingcap/ticdc's newJSONMessageForDML does.
    t = _table(
        ("id", "int"),
        ("c_tinyint", "tinyint"),
        ("c_smallint", "smallint"),
        ("c_mediumint", "mediumint"),
        ("c_int", "int"),
        ("c_bigint", "bigint"),
        table_id=1,
    )
    t = attrs.evolve(t, table="tp_int")
    row = (2, 127, 32767, 8388607, 2147483647, 9223372036854775807)
    message = CanalJsonEncoder(ROW_KEY, t, build_ts_ms=1639633142960).encode_row(
        RowChange(t, Op.INSERT, 429918007904436226, row)
    )
    assert message.value == (GOLDEN / "insert_tp_int_row_key.value.json").read_bytes()


ITEMS = _table(("id", "bigint unsigned"), ("name", "varchar(20)"), table_id=77)


def test_each_event_carries_the_key_of_the_row_in_data() -> None:
    encoder = CanalJsonEncoder(ROW_KEY, ITEMS, build_ts_ms=1)
    big = (1 << 64) - 2
    insert = RowChange(ITEMS, Op.INSERT, 1 << 18, (big, "a"))
    update = RowChange(ITEMS, Op.UPDATE, 2 << 18, (big, "b"), before=(big, "a"))
    delete = RowChange(ITEMS, Op.DELETE, 3 << 18, None, before=(big, "b"))
    for change in (insert, update, delete):
        assert _tidb(encoder.encode_row(change).value)["rowkey"] == _key(77, big)
    # A key-changing UPDATE goes as DELETE of the old row and INSERT of the new one.
    moved = RowChange(ITEMS, Op.UPDATE, 4 << 18, (3, "c"), before=(big, "b"))
    events = split_key_update(moved, (0,))
    keys = [_tidb(encoder.encode_row(e).value)["rowkey"] for e in events]
    assert [e.op for e in events] == [Op.DELETE, Op.INSERT]
    assert keys == [_key(77, big), _key(77, 3)]


def test_large_message_forms_keep_the_row_key_last() -> None:
    wide = _table(("id", "int"), ("text", "longtext"), table_id=5)
    change = RowChange(wide, Op.INSERT, 3 << 18, (7, "x" * 600))
    key_only = attrs.evolve(
        ROW_KEY,
        max_message_bytes=400,
        large_message_handle_option=LargeMessageHandleOption.HANDLE_KEY_ONLY,
    )
    value = CanalJsonEncoder(key_only, wide, build_ts_ms=1).encode_row(change).value
    assert value is not None
    assert value.endswith(b',"onlyHandleKey":true,"rowkey":"%b"}}' % _key(5, 7).encode())
    claim = attrs.evolve(
        key_only,
        large_message_handle_option=LargeMessageHandleOption.CLAIM_CHECK,
        claim_check_storage_uri="file:///cc",
    )
    store = MemoryStore()
    encoder = CanalJsonEncoder(claim, wide, build_ts_ms=1, claim_check=store)
    tidb = _tidb(encoder.encode_row(change).value)
    assert list(tidb) == ["commitTs", "claimCheckLocation", "rowkey"]
    assert tidb["rowkey"] == _key(5, 7)
    (stored,) = store.files.values()
    stored_value = base64.b64decode(json.loads(stored)["value"])
    assert _tidb(stored_value)["rowkey"] == _key(5, 7)


def test_without_the_tidb_extension_nothing_is_added() -> None:
    # TiCDC: "Only when both EnableTiDBExtension and OutputRowKey are true".
    plain = attrs.evolve(ROW_KEY, enable_tidb_extension=False)
    no_handle = _table(("name", "varchar(20)"), pk=("name",))
    change = RowChange(no_handle, Op.INSERT, 1 << 18, ("a",))
    with_option = CanalJsonEncoder(plain, no_handle, build_ts_ms=1).encode_row(change)
    without = CanalJsonEncoder(CodecConfig(protocol=Protocol.CANAL_JSON), no_handle, build_ts_ms=1)
    assert with_option.value == without.encode_row(change).value


@pytest.mark.parametrize(
    ("columns", "pk", "kwargs", "why"),
    [
        ((("name", "varchar(20)"),), ("name",), {}, "is not one integer column"),
        ((("a", "int"), ("b", "int")), ("a", "b"), {}, "is not one integer column"),
        ((("id", "int"),), ("id",), {"pk_clustered": False}, "is NONCLUSTERED"),
        ((("id", "int"),), (), {}, "has no primary key"),
    ],
)
def test_tables_without_an_integer_handle_are_refused(
    columns: tuple[tuple[str, str], ...], pk: tuple[str, ...], kwargs: dict[str, Any], why: str
) -> None:
    t = _table(*columns, pk=pk, **kwargs)
    with pytest.raises(SchemaError) as info:
        CanalJsonEncoder(ROW_KEY, t, build_ts_ms=1)
    first = str(info.value).splitlines()[0]
    assert first.startswith(
        "ticdc: option 'output-row-key' writes TiDB's row key, and table test.t"
    )
    assert why in first


def test_a_handle_value_the_key_cannot_take_names_the_column() -> None:
    encoder = CanalJsonEncoder(ROW_KEY, ITEMS, build_ts_ms=1)
    with pytest.raises(InputError, match="column id of test.t is the row handle of output-row-key"):
        encoder.encode_row(RowChange(ITEMS, Op.INSERT, 1 << 18, (1 << 64, "a")))


# -- the option -----------------------------------------------------------------------------


def test_the_option_comes_from_options_and_the_sink_uri() -> None:
    assert SinkConfig.from_options({**BASE, "output-row-key": "true"}).codec.output_row_key
    uri = "kafka://b:9092/t?protocol=canal-json&enable-tidb-extension=true&output-row-key=true"
    codec = SinkConfig.from_options({"sink-uri": uri}).codec
    assert codec.output_row_key and codec.enable_tidb_extension
    assert not SinkConfig.from_options(BASE).codec.output_row_key


def test_other_protocols_refuse_it() -> None:
    with pytest.raises(ConfigError) as info:
        SinkConfig.from_options({**BASE, "protocol": "debezium", "output-row-key": "true"})
    assert "applies to protocol canal-json, not to 'debezium'" in str(info.value)


def test_the_changefeed_files_key_is_ignored_as_ticdc_ignores_it(tmp_path: Path) -> None:
    # pingcap/ticdc v26.3.4 common/config.go mergeConfig copies no OutputRowKey from the
    # file's codec-config: only the sink URI's parameter counts.
    path = tmp_path / "changefeed.toml"
    path.write_text(
        "[sink]\nprotocol = 'canal-json'\n[sink.kafka-config.codec-config]\n"
        "enable-tidb-extension = true\noutput-row-key = true\n"
    )
    config = SinkConfig.from_options({**BASE, "config": str(path)})
    assert config.codec.enable_tidb_extension and not config.codec.output_row_key
    assert config.ignored == (
        f"config file {path} [sink.kafka-config.codec-config] key 'output-row-key' (TiCDC "
        "takes it from the sink URI only)",
    )


# -- reading --------------------------------------------------------------------------------


def test_the_decoder_reads_the_row_key_message_as_the_one_without() -> None:
    # pingcap/ticdc's decoder parses `rowkey` and makes nothing of it.
    decoder = CanalJsonDecoder()
    with_key = (GOLDEN / "insert_tp_int_row_key.value.json").read_bytes()
    without = (GOLDEN / "insert_tp_int.value.json").read_bytes()
    assert decoder.decode_message(b"", with_key) == decoder.decode_message(b"", without)
    assert decoder.row_table(b"", with_key) == decoder.row_table(b"", without)


def test_a_read_of_row_key_messages_gives_the_same_rows() -> None:
    items = table("items", {"name": "varchar(20)"})
    changes = [
        (Op.INSERT, 10, (1, "one"), None),
        (Op.UPDATE, 12, (1, "uno"), (1, "one")),
        (Op.DELETE, 13, None, (1, "uno")),
    ]
    config = ReadConfig.from_options(
        {"kafka.bootstrap.servers": "unused:1", "topic": "t", "protocol": "canal-json"}
    )
    read = []
    for codec in (ROW_KEY, attrs.evolve(ROW_KEY, output_row_key=False)):
        log = FakeTopicLog({0: protocol_messages(codec, items, changes, watermark=20)})
        plan = plan_read(config, log)
        rows = []
        for offsets in plan.ranges:
            for batch in read_range(config, plan.table, plan.known, offsets, log=log):
                rows += batch.to_pylist()
        read.append(rows)
    assert read[0] == read[1]
    assert [r["_op"] for r in read[0]] == ["INSERT", "UPDATE", "DELETE"]

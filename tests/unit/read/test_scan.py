"""A read's plan and its tasks, over a topic in memory: the schema found on the driver
(BOOTSTRAP before the first row, else from the partition's beginning), tables picked by
database/table, several tables, and bad messages named by topic, partition and offset."""

from __future__ import annotations

import attrs
import pytest

from tests.support import paths
from tests.support.read_log import FakeTopicLog, simple_messages, table
from ticdc_sink.errors import DecodeError, SchemaError
from ticdc_sink.events import Op
from ticdc_sink.read.discover import discover_tables
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.scan import read_range
from ticdc_sink.schema import Index

USERS = table("users")
ORDERS = table("orders", {"amount": "decimal(10,2)"})


def _config(**options: str) -> ReadConfig:
    return ReadConfig.from_options({"kafka.bootstrap.servers": "unused:1", "topic": "t", **options})


def _rows(config: ReadConfig, log: FakeTopicLog, **kwargs: int) -> list[dict]:
    plan = plan_read(config, log)
    rows = []
    for offsets in plan.ranges:
        for batch in read_range(config, plan.table, plan.known, offsets, log=log, **kwargs):
            rows += batch.to_pylist()
    return rows


def test_the_driver_reads_each_partition_up_to_its_first_row_only() -> None:
    inserts = [(Op.INSERT, 10 + i, (i, f"u{i}"), None) for i in range(5)]
    log = FakeTopicLog({0: simple_messages(USERS, inserts, watermark=20), 1: []})
    plan = plan_read(_config(), log)
    assert plan.table.table == "users" and plan.table.column_names == ("id", "name")
    assert log.reads == [OffsetRange("t", 0, 0, 7)]  # stopped at the row at offset 1
    assert plan.ranges == (OffsetRange("t", 0, 0, 7), OffsetRange("t", 1, 0, 0))


def test_a_start_after_the_bootstrap_finds_the_schema_from_the_beginning() -> None:
    inserts = [(Op.INSERT, 10 + i, (i, f"u{i}"), None) for i in range(5)]
    log = FakeTopicLog({0: simple_messages(USERS, inserts)})
    rows = _rows(_config(startingoffsets='{"t": {"0": 3}}'), log)
    assert [r["id"] for r in rows] == [2, 3, 4]
    assert OffsetRange("t", 0, 0, 3) in log.reads


def test_rows_come_in_batches_of_at_most_batch_rows() -> None:
    inserts = [(Op.INSERT, 10 + i, (i, f"u{i}"), None) for i in range(5)]
    log = FakeTopicLog({0: simple_messages(USERS, inserts, watermark=20)})
    config = _config()
    plan = plan_read(config, log)
    sizes = [
        b.num_rows
        for b in read_range(config, plan.table, plan.known, plan.ranges[0], log=log, batch_rows=2)
    ]
    assert sizes == [2, 2, 1]


def test_database_and_table_pick_one_table_of_a_shared_topic() -> None:
    values = simple_messages(USERS, [(Op.INSERT, 10, (1, "a"), None)]) + simple_messages(
        ORDERS, [(Op.INSERT, 11, (2, "9.50"), None)]
    )
    log = FakeTopicLog({0: values})
    rows = _rows(_config(table="orders"), log)
    assert [(r["_table"], r["id"], str(r["amount"])) for r in rows] == [("orders", 2, "9.50")]
    with pytest.raises(SchemaError, match="no schema of db.nothing was found in topic t"):
        plan_read(_config(database="db", table="nothing"), FakeTopicLog({0: values}))


def test_tables_with_different_columns_are_an_error_listing_them() -> None:
    values = simple_messages(USERS, []) + simple_messages(ORDERS, [])
    with pytest.raises(SchemaError) as caught:
        plan_read(_config(), FakeTopicLog({0: values}))
    message = str(caught.value)
    assert "db.users (id bigint" in message and "db.orders (id bigint" in message
    assert "pick one with options database and table" in message


def test_a_table_met_only_in_a_task_with_other_columns_fails_naming_the_offset() -> None:
    values = simple_messages(USERS, [(Op.INSERT, 10, (1, "a"), None)]) + simple_messages(
        ORDERS, [(Op.INSERT, 11, (2, "9.50"), None)]
    )
    with pytest.raises(SchemaError, match="topic t partition 0 offset 3: db.orders") as caught:
        _rows(_config(), FakeTopicLog({0: values}))
    assert "pick one table with options database and table" in str(caught.value)


def test_tables_with_the_same_columns_read_together() -> None:
    twin = table("users_2")
    values = simple_messages(USERS, [(Op.INSERT, 10, (1, "a"), None)]) + simple_messages(
        twin, [(Op.INSERT, 11, (2, "b"), None)]
    )
    rows = _rows(_config(), FakeTopicLog({0: values}))
    assert [(r["_table"], r["id"]) for r in rows] == [("users", 1), ("users_2", 2)]


def test_a_message_of_another_protocol_names_topic_partition_and_offset() -> None:
    values = [*simple_messages(USERS, [(Op.INSERT, 10, (1, "a"), None)]), b'{"type": "INSERT"}']
    with pytest.raises(DecodeError, match=r"^ticdc: topic t partition 0 offset 2: Simple message"):
        _rows(_config(), FakeTopicLog({0: values}))


def test_no_schema_anywhere_names_the_row_and_what_to_do() -> None:
    values = simple_messages(USERS, [(Op.INSERT, 10, (1, "a"), None)], bootstrap=False)
    with pytest.raises(DecodeError, match="^ticdc: topic t partition 0 offset 0: no schema of "):
        plan_read(_config(), FakeTopicLog({0: values}))
    with pytest.raises(DecodeError, match="set option startingOffsets past the rows"):
        plan_read(_config(), FakeTopicLog({0: values}))


def test_no_row_and_no_schema_says_which_options_to_check() -> None:
    with pytest.raises(SchemaError, match="no schema of any table was found in topic t"):
        plan_read(_config(), FakeTopicLog({0: [], 1: []}))


def test_a_start_after_a_column_was_added_finds_the_new_schema_before_it() -> None:
    # BOOTSTRAP v1, a v1 row, then the table gains a column: BOOTSTRAP v2 and v2 rows. A
    # read from the second v2 row finds v2 behind the v1 row, not only v1.
    wider = table("users", {"name": "varchar(20)", "age": "int"}, version=2)
    values = simple_messages(USERS, [(Op.INSERT, 10, (1, "a"), None)]) + simple_messages(
        wider, [(Op.INSERT, 11, (2, "b", 20), None), (Op.INSERT, 12, (3, "c", 30), None)]
    )
    rows = _rows(_config(startingoffsets='{"t": {"0": 4}}'), FakeTopicLog({0: values}))
    assert [(r["id"], r["age"]) for r in rows] == [(3, 30)]


def test_a_row_before_its_bootstrap_takes_the_schema_after_it() -> None:
    # As TiCDC's consumer holds a Simple row until its table's BOOTSTRAP arrives.
    inserts = [(Op.INSERT, 10, (1, "a"), None), (Op.INSERT, 11, (2, "b"), None)]
    values = simple_messages(USERS, inserts)
    values = [values[1], values[0], values[2]]  # row, BOOTSTRAP, row
    log = FakeTopicLog({0: values, 1: values[:1]})
    assert [r["id"] for r in _rows(_config(), log)] == [1, 2, 1]


def test_skip_leaves_bad_messages_out_and_logs_the_count(caplog) -> None:
    values = [
        *simple_messages(USERS, [(Op.INSERT, 10, (1, "a"), None)]),
        b"not json",
        None,
        *simple_messages(USERS, [(Op.INSERT, 11, (2, "b"), None)], bootstrap=False),
    ]
    with caplog.at_level("WARNING", logger="ticdc_sink.read.decoding"):
        rows = _rows(_config(**{"on-bad-message": "skip"}), FakeTopicLog({0: values}))
    assert [r["id"] for r in rows] == [1, 2]
    [warning] = [r.getMessage() for r in caplog.records]
    assert "partition 0 offsets 0..4 skipped 2 message(s)" in warning
    assert "the first: ticdc: topic t partition 0 offset 2: the value is not JSON" in warning


def test_truncated_simple_avro_names_topic_partition_and_offset() -> None:
    from ticdc_sink.codec.protocols import build_encoder
    from ticdc_sink.config import CodecConfig, EncodingFormat
    from ticdc_sink.events import RowChange

    avro = CodecConfig(encoding_format=EncodingFormat.AVRO)
    encoder = build_encoder(avro, USERS, build_ts_ms=1)
    bootstrap = encoder.encode_bootstrap()
    row = encoder.encode_row(RowChange(USERS, Op.INSERT, 10, (1, "a")))
    assert bootstrap is not None and bootstrap.value is not None and row.value is not None
    values = [bootstrap.value, row.value[: len(row.value) // 2]]
    config = _config(**{"encoding-format": "avro"})
    with pytest.raises(
        DecodeError, match="topic t partition 0 offset 1: the value is not a Simple"
    ):
        _rows(config, FakeTopicLog({0: values}))


def test_a_read_from_latest_has_the_schema_of_the_messages_before_it() -> None:
    inserts = [(Op.INSERT, 10 + i, (i, f"u{i}"), None) for i in range(3)]
    log = FakeTopicLog({0: simple_messages(USERS, inserts), 1: []})
    config = _config(startingoffsets="latest")
    plan = plan_read(config, log)
    assert plan.table.column_names == ("id", "name")
    assert log.reads == [OffsetRange("t", 0, 0, 4)]
    assert _rows(config, FakeTopicLog({0: simple_messages(USERS, inserts), 1: []})) == []


def test_ticdc_golden_messages_read_into_the_docs_rows() -> None:
    # TiCDC's Simple doc examples (tests/golden/simple): the DDL adds createTime to
    # simple.user, and its preTableSchema is the schema the doc's DML rows carry: a read
    # returns the columns of the rows it reads, not of a schema that comes later.
    golden = paths.GOLDEN / "simple"
    names = ("bootstrap", "ddl_alter", "insert", "update", "delete", "watermark")
    values: list[bytes | None] = [(golden / f"{n}.value.json").read_bytes() for n in names]
    rows = _rows(_config(database="simple", table="user"), FakeTopicLog({0: values}))
    assert [(r["_op"], r["_commit_ts"], r["id"], r["score"], r["_before"]) for r in rows] == [
        ("INSERT", 447984084414103554, 1, 90.5, None),
        (
            "UPDATE",
            447984099186180098,
            1,
            95.0,
            {"id": 1, "name": "John Doe", "age": 25, "score": 90.5},
        ),
        ("DELETE", 447984114259722243, 1, 95.0, None),
    ]
    assert {(r["_database"], r["_table"], r["name"], r["age"]) for r in rows} == {
        ("simple", "user", "John Doe", 25)
    }


# A schema change whose new version has the lower number: the sink derives versions from
# a hash of the schema (`schema.stable_version`), so they are no order; the log is.
NEWER = table("users", {"name": "varchar(20)", "age": "int"}, version=3)
OLDER = table("users", version=5)


def _changed_log(partitions: int = 1) -> FakeTopicLog:
    """Each partition: OLDER's BOOTSTRAP and a row (ts 10), a watermark, then NEWER's
    BOOTSTRAP and a row (ts 20)."""
    values = simple_messages(OLDER, [(Op.INSERT, 10, (1, "a"), None)], watermark=10)
    values += simple_messages(NEWER, [(Op.INSERT, 20, (2, "b", 30), None)])
    return FakeTopicLog(dict.fromkeys(range(partitions), values))


def test_a_read_from_latest_takes_the_schema_last_in_the_log_not_the_highest_version() -> None:
    plan = plan_read(_config(startingoffsets="latest"), _changed_log(2))
    assert (plan.table.version, plan.table.column_names) == (3, ("id", "name", "age"))


def test_the_newest_first_row_decides_by_its_commit_ts_not_its_version() -> None:
    # Partition 0 is read from its newer row (ts 20), partition 1 from its older one (ts
    # 10); a change that keeps the columns (a unique key added) reads together, with the
    # newer schema's keys and version.
    keyed = attrs.evolve(
        OLDER, version=3, indexes=(*OLDER.indexes, Index("u_name", ("name",), unique=True))
    )
    values = simple_messages(OLDER, [(Op.INSERT, 10, (1, "a"), None)], watermark=10)
    values += simple_messages(keyed, [(Op.INSERT, 20, (2, "b"), None)])
    log = FakeTopicLog({0: values, 1: values})
    config = _config(startingoffsets='{"t": {"0": 3, "1": 0}}')
    plan = plan_read(config, log)
    assert (plan.table.version, [i.name for i in plan.table.indexes]) == (3, ["PRIMARY", "u_name"])
    rows = _rows(config, log)
    assert sorted(r["id"] for r in rows) == [1, 2, 2]


def test_a_schema_first_in_its_range_counts_the_commit_ts_before_the_range() -> None:
    # users_2 changes to a version with a lower number (a key added) at offset 4, where
    # the read starts; the driver reads the history before the start only after the range
    # (users' BOOTSTRAP is there), and the new version still ranks after the watermark
    # of ts 10 before it, and so after the old version (after ts 5).
    old = table("users_2", version=7)
    new = attrs.evolve(old, version=4, indexes=(*old.indexes, Index("u", ("name",), unique=True)))
    mark = simple_messages(USERS, [], bootstrap=False, watermark=5)
    values = mark + simple_messages(old, [], watermark=10) + simple_messages(USERS, [])
    values += simple_messages(new, []) + simple_messages(
        USERS, [(Op.INSERT, 20, (1, "a"), None)], bootstrap=False
    )
    found = discover_tables(
        _config(), FakeTopicLog({0: values}), [(OffsetRange("t", 0, 4, 6), (0, 6))]
    )
    assert [(t.table, t.version) for t in found.tables] == [
        ("users_2", 7),
        ("users_2", 4),
        ("users", 1),
    ]

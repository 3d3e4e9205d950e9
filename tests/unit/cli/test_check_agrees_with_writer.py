"""`ticdc-sink check` and the writer over the same options and tables (filter rules,
event filters, column selectors, dispatchers): check prints what the writer does, table
by table, because both call the writer's own decision (`writer.plan.decide_table`)."""

from __future__ import annotations

import json
import re

import orjson
import pyarrow as pa
import pytest
from pyspark.sql import types as T

from tests.support.fake_producer import FakeProducer
from ticdc_sink.cli import main
from ticdc_sink.config import SinkConfig
from ticdc_sink.writer import make_plan, write_batches
from ticdc_sink.writer.bootstrap import BootstrapSchedule

DDL = "CREATE TABLE shop.users (id bigint PRIMARY KEY, name varchar(20), score int)"
TABLES = ["shop.users", "shop.orders", "hr.people", "hr.secret_pay", "other.t"]
OPTIONS = {
    "kafka.bootstrap.servers": "127.0.0.1:1",
    "topic": "t_{schema}_{table}",
    "protocol": "canal-json",
    "partition-num": "4",
    "table-ddl": DDL,
    "dispatchers": json.dumps(
        [
            {"matcher": ["/^shop$/.*"], "topic": "rule_{table}", "partition": "index-value"},
            {"matcher": ["hr.*"], "topic": "hr", "partition": "columns", "columns": ["name"]},
        ]
    ),
    "filter-rules": json.dumps(["shop.*", "hr.*", "!hr.secret*"]),
    "event-filters": json.dumps([{"matcher": ["shop.orders"], "ignore-event": ["delete"]}]),
    "column-selectors": json.dumps([{"matcher": ["shop.*"], "columns": ["id", "`name`"]}]),
}


def _checked(capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, object]]:
    argv = ["check", "--partitions", "4", "--key", "id=7", "--key", "name=ann"]
    for name, value in OPTIONS.items():
        argv += ["-o", f"{name}={value}"]
    for table in TABLES:
        argv += ["--table", table]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    found: dict[str, dict[str, object]] = {}
    for block in out.split("\ntable ")[1:]:
        name = block.split(" ", 1)[0]
        head = block.splitlines()[0]
        columns = re.search(r"columns sent: ([^(]+) \(", block)
        partition = re.search(r"-> partition (\d+) of 4", block)
        found[name] = {
            "written": "not written" not in head,
            "topic": head.split("-> topic ")[1].split(" ")[0] if "-> topic " in head else None,
            "columns": columns.group(1).split(", ") if columns else ["id", "name", "score"],
            "partition": int(partition.group(1)) if partition else None,
            "ignores delete": "ignores delete rows" in block,
        }
    return found


def _written() -> tuple[dict[str, dict[str, object]], int]:
    config = SinkConfig.from_options(OPTIONS)
    rows = [
        (database, table, op)
        for database, table in (t.split(".") for t in TABLES)
        for op in ("c", "d")
    ]
    batch = pa.record_batch(
        {
            "id": pa.array([7] * len(rows), pa.int64()),
            "name": ["ann"] * len(rows),
            "score": pa.array([1] * len(rows), pa.int32()),
            "_op": [op for _, _, op in rows],
            "_database": [database for database, _, _ in rows],
            "_table": [table for _, table, _ in rows],
        }
    )
    spark = T.StructType(
        [
            T.StructField("id", T.LongType(), False),
            T.StructField("name", T.StringType()),
            T.StructField("score", T.IntegerType()),
            T.StructField("_op", T.StringType()),
            T.StructField("_database", T.StringType()),
            T.StructField("_table", T.StringType()),
        ]
    )
    plan = make_plan(
        config, spark, 449_000_000_000_000_000, batch_id=None, arrow_schema=batch.schema
    )
    producer = FakeProducer(partitions=4)
    report = write_batches([batch], plan, producer_factory=producer, bootstraps=BootstrapSchedule())
    written: dict[str, dict[str, object]] = {t: {"written": False} for t in TABLES}
    for topic, partition, _key, value in producer.sent:
        message = orjson.loads(value)
        name = f"{message['database']}.{message['table']}"
        seen = written[name]
        seen.update(written=True, topic=topic, partition=partition)
        seen["columns"] = list(message["data"][0])
        seen.setdefault("types", set()).add(message["type"])
    return written, report.filtered


def test_check_prints_what_the_writer_does(capsys: pytest.CaptureFixture[str]) -> None:
    checked = _checked(capsys)
    written, filtered = _written()
    assert set(checked) == set(TABLES)
    for table in TABLES:
        got, sent = checked[table], written[table]
        assert got["written"] == sent["written"], table
        if not sent["written"]:
            continue
        assert got["topic"] == sent["topic"], table
        assert got["partition"] == sent["partition"], table
        assert got["columns"] == sent["columns"], table
        assert got["ignores delete"] == (sent["types"] == {"INSERT"}), table
    # What the filters did, so the comparison above is not of two empty outputs.
    assert [t for t in TABLES if not written[t]["written"]] == ["hr.secret_pay", "other.t"]
    assert written["shop.orders"]["types"] == {"INSERT"}
    assert written["shop.users"]["columns"] == ["id", "name"]
    assert written["hr.people"]["topic"] == "hr"
    assert filtered == 5  # two tables of two rows, one DELETE


def test_check_prints_the_filter_options_in_full(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check"]
    for name, value in OPTIONS.items():
        argv += ["-o", f"{name}={value}"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "  filter-rules: shop.*, hr.*, !hr.secret*\n" in out
    assert '  event-filters: {"matcher": ["shop.orders"], "ignore-event": ["delete"]}\n' in out
    assert '  column-selectors: {"matcher": ["shop.*"], "columns": ["id", "`name`"]}\n' in out


def test_dry_run_of_a_filtered_table_says_nothing_is_sent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["dry-run", "--table-ddl", DDL, "-o", "filter-rules=hr.*"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "table shop.users: not written, option 'filter-rules' does not take it" in out
    assert "== INSERT" not in out


def test_dry_run_shows_event_filters_and_selected_columns(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["dry-run", "--table-ddl", DDL.replace("shop.users", "shop.orders")]
    for name in ("event-filters", "column-selectors"):
        argv += ["-o", f"{name}={OPTIONS[name]}"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "  event-filters rule 1 applies: ignores delete rows\n" in out
    assert "  columns sent: id, name (column-selectors entry 1;" in out
    delete = out.split("== DELETE")[1].split("\n== ")[0]
    assert "(not sent: event-filters rule 1 ignores delete rows of this table)" in delete
    insert = out.split("== INSERT")[1].split("\n== ")[0]
    assert '"score"' not in insert and '"name"' in insert

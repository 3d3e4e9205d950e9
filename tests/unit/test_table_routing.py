"""Table routing, dispatcher rules' `target-schema` / `target-table` (pingcap/ticdc master,
in no release yet): TiCDC's router, conflict and expression vectors
(tests/golden/table_routing/router.json), and what the writer does with them: messages
name the target, topics and partitions stay the source's, DDL is rewritten."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pyarrow as pa
import pytest

from tests.support import paths
from tests.support.fake_producer import FakeProducer
from ticdc_sink import tso
from ticdc_sink.cli import main
from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import ConfigError
from ticdc_sink.routing import DispatchRule, claim_target
from ticdc_sink.writer import TablePlan, WritePlan, write_batches
from ticdc_sink.writer import rules as writer_rules
from ticdc_sink.writer.commit import schema_change_query, send_schema_change
from ticdc_sink.writer.table import build_table_schema

GOLDEN = json.loads((paths.GOLDEN / "table_routing" / "router.json").read_text())
BASE = {"kafka.bootstrap.servers": "127.0.0.1:1", "topic": "t_{schema}_{table}"}
COMMIT_TS = tso.compose(1_700_000_000_000)
ARCHIVE = [{"matcher": ["shop.*"], "target-schema": "archive", "target-table": "{table}_bak"}]


def _config(rules: list[dict[str, Any]], **options: str) -> SinkConfig:
    return SinkConfig.from_options({**BASE, "dispatchers": json.dumps(rules), **options})


# -- TiCDC's vectors ------------------------------------------------------------------------


@pytest.mark.parametrize("case", GOLDEN["substitute"], ids=lambda c: c["expr"] or "empty")
def test_expressions_are_substituted_as_ticdc_does(case: dict[str, str]) -> None:
    rule = DispatchRule(["*.*"], target_schema=case["expr"] or None)
    assert case["default"] in ("unused", case["schema"])  # the default is the schema's own
    assert rule.target_of(case["schema"], case["table"])[0] == case["expected"]


@pytest.mark.parametrize("case", GOLDEN["routers"], ids=lambda c: c["test"])
def test_routes_are_ticdcs(case: dict[str, Any]) -> None:
    config = _config(case["rules"], **{"case-sensitive": str(case["case_sensitive"]).lower()})
    for schema, table, target_schema, target_table in case["routes"]:
        assert writer_rules.target_of(config.routing, schema, table) == (
            target_schema,
            target_table,
        )


@pytest.mark.parametrize("case", GOLDEN["conflicts"], ids=lambda c: str(c["conflict"]))
def test_two_tables_routed_to_one_name_conflict(case: dict[str, Any]) -> None:
    config = _config(case["rules"])
    owners: dict[tuple[str, str], tuple[str, str]] = {}
    # (source, target)
    claims = [(tuple(t), writer_rules.target_of(config.routing, *t)) for t in case["tables"]]
    if case["conflict"] is None:
        for source, target in claims:
            claim_target(owners, source, target)
        return
    claim_target(owners, *claims[0])
    with pytest.raises(ConfigError) as info:
        claim_target(owners, *claims[1])
    target = ".".join(case["conflict"])
    assert f"tables db1.orders and db2.orders are both written as {target}" in str(info.value)
    claim_target(owners, *claims[0])  # the same table again is no conflict


@pytest.mark.parametrize("expression", GOLDEN["valid_expressions"])
def test_valid_expressions_are_taken(expression: str) -> None:
    rule = {"matcher": ["db.*"], "target-table": expression}
    assert _config([rule]).routing.dispatchers[0].target_table == (expression or None)


@pytest.mark.parametrize("expression", GOLDEN["invalid_expressions"])
def test_invalid_expressions_are_refused(expression: str) -> None:
    with pytest.raises(ConfigError) as info:
        _config([{"matcher": ["db.*"], "target-schema": expression}])
    assert f"target-schema {expression!r} must contain only literal text, {{schema}}, and " in (
        str(info.value)
    )


def test_a_catch_all_rule_of_the_changefeed_file_keeps_its_targets(tmp_path: Path) -> None:
    path = tmp_path / "changefeed.toml"
    path.write_text(
        "[sink]\ndispatchers = [{matcher = ['*.*'], topic = 'x_{table}', target-schema = 'bak'}]\n"
    )
    config = SinkConfig.from_options({**BASE, "config": str(path)})
    assert writer_rules.target_of(config.routing, "shop", "users") == ("bak", "users")
    assert writer_rules.topic_for(config.routing, "shop", "users") == "x_users"


def test_rules_with_targets_pickle_and_compare_with_them() -> None:
    import pickle

    (rule,) = _config(ARCHIVE, **{"case-sensitive": "true"}).routing.dispatchers
    again = pickle.loads(pickle.dumps(rule))
    assert again == rule and again.target_of("shop", "u") == ("archive", "u_bak")
    assert again.filter.case_sensitive
    assert rule != DispatchRule(["shop.*"], target_schema="archive")


# -- the writer -----------------------------------------------------------------------------


def _plan(config: SinkConfig, table: str | None = "users") -> WritePlan:
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    spark_schema = StructType(
        [
            StructField("_op", StringType()),
            StructField("id", LongType()),
            StructField("name", StringType()),
        ]
    )
    template = build_table_schema(
        "shop", table or "_routed", spark_schema, reserved={"_op", "_table"}, primary_key=("id",)
    )
    return WritePlan(
        config=config,
        tables=TablePlan(template, default_database="shop", default_table=table),
        commit_ts=COMMIT_TS,
        build_ts_ms=tso.physical_ms(COMMIT_TS),
    )


def _write(config: SinkConfig, record: pa.RecordBatch, table: str | None = "users") -> Any:
    producer = FakeProducer(partitions=8)
    write_batches([record], _plan(config, table), producer_factory=producer)
    return producer


RECORD = pa.RecordBatch.from_pydict(
    {"_op": ["c", "c", "d"], "id": pa.array([1, 2, 1], pa.int64()), "name": ["a", "b", "a"]}
)


@pytest.mark.parametrize(
    ("protocol", "names"),
    [
        ("simple", lambda v: (v["database"], v["table"])),
        ("canal-json", lambda v: (v["database"], v["table"])),
        ("debezium", lambda v: (v["payload"]["source"]["db"], v["payload"]["source"]["table"])),
    ],
)
def test_messages_name_the_target_and_go_where_the_source_goes(protocol: str, names: Any) -> None:
    # A rule with targets is a dispatch rule too (its partition and topic decide); the
    # same rule without them routes the same way.
    rule = {"matcher": ["shop.*"], "partition": "index-value"}
    routed = _write(_config([{**ARCHIVE[0], **rule}], protocol=protocol), RECORD)
    plain = _write(_config([rule], protocol=protocol), RECORD)
    rows = [v for v in routed.values() if v.get("type") != "BOOTSTRAP"]
    assert {names(v) for v in rows} == {("archive", "users_bak")}

    # topics and partitions: the source's (t_shop_users), as without the rule (BOOTSTRAPs
    # left out: a worker process sends a table's first ones once)
    def where(producer: FakeProducer) -> list[tuple[str, int]]:
        return [(t, p) for t, p, _, v in producer.sent if b"BOOTSTRAP" not in (v or b"")]

    assert where(routed) == where(plain)
    assert {t for t, _, _, _ in routed.sent} == {"t_shop_users"}
    if protocol == "simple":  # BOOTSTRAPs describe the target
        boots = [v for v in routed.values() if v.get("type") == "BOOTSTRAP"]
        assert {(b["tableSchema"]["schema"], b["tableSchema"]["table"]) for b in boots} == {
            ("archive", "users_bak")
        }


def test_a_message_equals_that_of_a_table_named_as_the_target() -> None:
    routed = _write(_config(ARCHIVE, protocol="canal-json"), RECORD)
    rule = [{"matcher": ["shop.*"], "topic": "t_shop_users"}]
    renamed_plan = _plan(_config(rule, protocol="canal-json"))
    template = attrs.evolve(renamed_plan.tables.template, database="archive", table="users_bak")
    renamed_plan = attrs.evolve(
        renamed_plan,
        tables=TablePlan(template, default_database="archive", default_table="users_bak"),
    )
    producer = FakeProducer(partitions=8)
    write_batches([RECORD], renamed_plan, producer_factory=producer)
    assert [v for _, _, _, v in routed.sent] == [v for _, _, _, v in producer.sent]


def test_two_tables_of_one_batch_routed_to_one_name_fail() -> None:
    rules = [{"matcher": ["shop.*"], "target-table": "merged"}]
    record = pa.RecordBatch.from_pydict(
        {"_op": ["c", "c"], "id": pa.array([1, 2], pa.int64()), "name": ["a", "b"]}
        | {"_table": ["users", "clients"]}
    )
    with pytest.raises(ConfigError, match="tables shop.users and shop.clients are both written"):
        _write(_config(rules), record, table=None)
    distinct = [{"matcher": ["shop.*"], "target-table": "{table}_bak"}]
    producer = _write(_config(distinct), record, table=None)
    tables = {v["table"] for v in producer.values() if v.get("type") == "INSERT"}
    assert tables == {"users_bak", "clients_bak"}


def test_ddl_names_the_target_and_goes_to_the_sources_topic() -> None:
    config = _config(ARCHIVE, protocol="canal-json", **{"ddl-on-first-batch": "true"})
    producer = FakeProducer(partitions=2)
    query = send_schema_change(_plan(config), None, producer_factory=producer)
    # qualified with the target schema, as TiCDC's rewriter writes a routed table's name
    assert query is not None and query.startswith("CREATE TABLE `archive`.`users_bak` (")
    ((topic, partition, _, value),) = producer.sent
    assert (topic, partition) == ("t_shop_users", 0)
    ddl = json.loads(value or b"")
    assert (ddl["database"], ddl["table"], ddl["sql"]) == ("archive", "users_bak", query)
    # a change of schema: ALTER of the target, the previous schema routed too
    plan = _plan(attrs.evolve(config, codec=attrs.evolve(config.codec, ddl_on_first_batch=False)))
    table = plan.tables.template
    previous = attrs.evolve(table, columns=table.columns[:1])
    altered = schema_change_query(plan, previous)
    assert altered == "ALTER TABLE `archive`.`users_bak` ADD COLUMN `name` text"
    assert schema_change_query(_plan(_config([])), previous) == (
        "ALTER TABLE `users` ADD COLUMN `name` text"
    )


def test_check_and_dry_run_show_the_target(capsys: pytest.CaptureFixture[str]) -> None:
    ddl = "CREATE TABLE shop.users (id bigint PRIMARY KEY, name varchar(20))"
    rules = json.dumps(ARCHIVE)
    assert main(["check", "-o", f"dispatchers={rules}", "--table-ddl", ddl]) == 0
    out = capsys.readouterr().out
    assert "messages name the table archive.users_bak (dispatchers target-schema" in out
    assert "table shop.users -> topic" in out
    assert main(["dry-run", "-o", f"dispatchers={rules}", "--table-ddl", ddl]) == 0
    out = capsys.readouterr().out
    assert '"database":"archive"' in out.replace(" ", "")

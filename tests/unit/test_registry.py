"""ConfluentSchemaRegistry (ticdc_sink/registry.py) against the test registry: subjects per
strategy, one request per distinct schema, errors that name what to fix and keep secrets."""

from __future__ import annotations

import json
import logging
import pathlib
import socket
import time
import urllib.parse
from collections.abc import Iterator

import attrs
import pytest

from tests.support.broker import free_port
from tests.support.registry import TestSchemaRegistry
from ticdc_sink.config import RegistryConfig, SubjectNameStrategy
from ticdc_sink.errors import ConfigError, RegistryError
from ticdc_sink.registry import ConfluentSchemaRegistry, subject_for

RECORD = "default.shop.orders"
PASSWORD = "pa55:w0rd/secret"


def _schema(*fields: dict[str, object], name: str = "orders") -> str:
    return json.dumps(
        {"type": "record", "name": name, "namespace": "default.shop", "fields": list(fields)},
        separators=(",", ":"),
    )


ID = {"name": "id", "type": "long"}
V1 = _schema(ID)
V2 = _schema(ID, {"name": "note", "type": ["null", "string"], "default": None})
KEY = _schema(ID)
INCOMPATIBLE = _schema({"name": "id", "type": "string"})

# Fast failure for the unreachable cases: one retry, tiny backoff.
FAST = {"max.retries": 1, "retries.wait.ms": 1, "retries.max.wait.ms": 2}


@pytest.fixture
def server() -> Iterator[TestSchemaRegistry]:
    with TestSchemaRegistry() as made:
        yield made


def _registry(
    server: TestSchemaRegistry,
    strategy: SubjectNameStrategy = SubjectNameStrategy.TOPIC,
    **kwargs: object,
) -> ConfluentSchemaRegistry:
    return ConfluentSchemaRegistry(RegistryConfig(url=server.url), strategy, **kwargs)  # type: ignore[arg-type]


# -- subjects ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("strategy", "topic", "is_key", "subject"),
    [
        (SubjectNameStrategy.TOPIC, "orders", False, "orders-value"),
        (SubjectNameStrategy.TOPIC, "orders", True, "orders-key"),
        # TiCDC sanitizeTopic: dots become underscores, nothing else changes
        (SubjectNameStrategy.TOPIC, "tidb.shop.orders-1", False, "tidb_shop_orders-1-value"),
        (SubjectNameStrategy.RECORD, "tidb.shop", False, RECORD),
        (SubjectNameStrategy.RECORD, "tidb.shop", True, RECORD),
        (SubjectNameStrategy.TOPIC_RECORD, "tidb.shop", False, f"tidb.shop-{RECORD}"),
        (SubjectNameStrategy.TOPIC_RECORD, "tidb.shop", True, f"tidb.shop-{RECORD}"),
        ("topic-record", "t", True, f"t-{RECORD}"),
    ],
)
def test_subject_for(strategy: SubjectNameStrategy, topic: str, is_key: bool, subject: str) -> None:
    assert subject_for(strategy, topic, RECORD, is_key=is_key) == subject


def test_record_strategies_follow_confluent() -> None:
    from confluent_kafka.schema_registry import (
        record_subject_name_strategy,
        topic_record_subject_name_strategy,
        topic_subject_name_strategy,
    )
    from confluent_kafka.serialization import MessageField, SerializationContext

    for field, is_key in ((MessageField.KEY, True), (MessageField.VALUE, False)):
        ctx = SerializationContext("orders", field)
        assert subject_for(
            SubjectNameStrategy.RECORD, "orders", RECORD, is_key=is_key
        ) == record_subject_name_strategy(ctx, RECORD)
        assert subject_for(
            SubjectNameStrategy.TOPIC_RECORD, "orders", RECORD, is_key=is_key
        ) == topic_record_subject_name_strategy(ctx, RECORD)
        # without dots, TiCDC's topic strategy and Confluent's agree
        assert subject_for(
            SubjectNameStrategy.TOPIC, "orders", RECORD, is_key=is_key
        ) == topic_subject_name_strategy(ctx, RECORD)


@pytest.mark.parametrize("strategy", [SubjectNameStrategy.TOPIC, SubjectNameStrategy.TOPIC_RECORD])
def test_topic_strategies_need_a_topic(strategy: SubjectNameStrategy) -> None:
    with pytest.raises(ConfigError, match="needs the topic") as error:
        subject_for(strategy, "", RECORD, is_key=False)
    assert error.value.option == "subject-name-strategy"


@pytest.mark.parametrize(
    ("strategy", "subjects"),
    [
        (SubjectNameStrategy.TOPIC, ["tidb_shop-key", "tidb_shop-value"]),
        (SubjectNameStrategy.RECORD, [RECORD]),
        (SubjectNameStrategy.TOPIC_RECORD, [f"tidb.shop-{RECORD}"]),
    ],
)
def test_schemas_land_under_the_strategys_subjects(
    server: TestSchemaRegistry, strategy: SubjectNameStrategy, subjects: list[str]
) -> None:
    with _registry(server, strategy) as registry:
        key_id = registry.schema_id("tidb.shop", RECORD, KEY, is_key=True)
        value_id = registry.schema_id("tidb.shop", RECORD, V1, is_key=False)
    assert server.subjects() == subjects
    # key and value schemas are the same text here: one global id
    assert key_id == value_id
    for subject in subjects:
        assert server.schemas(subject) == [V1]


# -- caching and evolution -----------------------------------------------------------------


def test_one_request_per_distinct_schema(server: TestSchemaRegistry) -> None:
    registry = _registry(server)
    ids = [registry.schema_id("orders", RECORD, V1, is_key=False) for _ in range(5)]
    key_ids = [registry.schema_id("orders", RECORD, KEY, is_key=True) for _ in range(5)]
    assert len(set(ids)) == 1 and len(set(key_ids)) == 1
    assert server.count("POST", "/subjects/{subject}/versions") == 2
    assert server.count() == 2
    assert registry.calls == 2
    # the same schema under another topic is another subject: one more request
    registry.schema_id("payments", RECORD, V1, is_key=False)
    assert registry.calls == server.count() == 3
    registry.close()


def test_evolution_registers_a_new_version(server: TestSchemaRegistry) -> None:
    with _registry(server) as registry:
        first = registry.schema_id("orders", RECORD, V1, is_key=False)
        second = registry.schema_id("orders", RECORD, V2, is_key=False)
        assert second != first
        assert server.schemas("orders-value") == [V1, V2]
        # going back to the first schema answers its id again without a new version
        assert registry.schema_id("orders", RECORD, V1, is_key=False) == first
        assert server.schemas("orders-value") == [V1, V2]
        assert registry.calls == 2


def test_cache_is_bounded(server: TestSchemaRegistry) -> None:
    with _registry(server, cache_capacity=1) as registry:
        for schema in (V1, V2, V1):
            registry.schema_id("orders", RECORD, schema, is_key=False)
        assert registry.calls == 3


def test_schema_text(server: TestSchemaRegistry) -> None:
    with _registry(server) as writer:
        schema_id = writer.schema_id("orders", RECORD, V2, is_key=False)
        assert writer.schema_text(schema_id) == V2  # from the cache
        assert writer.calls == 1
    server.reset_requests()
    with _registry(server) as reader:
        assert reader.schema_text(schema_id) == V2
        assert reader.schema_text(schema_id) == V2
        assert reader.calls == 1
    assert server.requests == [("GET", f"/schemas/ids/{schema_id}")]


def test_close_then_use_again(server: TestSchemaRegistry) -> None:
    registry = _registry(server)
    registry.schema_id("orders", RECORD, V1, is_key=False)
    registry.close()
    registry.close()
    assert registry.schema_id("orders", RECORD, V2, is_key=False) >= 1
    registry.close()


# -- errors --------------------------------------------------------------------------------


def test_incompatible_schema(server: TestSchemaRegistry) -> None:
    with _registry(server) as registry:
        registry.schema_id("tidb.orders", RECORD, V1, is_key=False)
        with pytest.raises(RegistryError) as refused:
            registry.schema_id("tidb.orders", RECORD, INCOMPATIBLE, is_key=False)
    error = refused.value
    text = str(error)
    assert "\n" not in text
    assert error.subject == "tidb_orders-value"
    assert error.error_code == 409  # type: ignore[attr-defined]
    assert error.http_status == 409  # type: ignore[attr-defined]
    assert error.url == server.url  # type: ignore[attr-defined]
    assert text.startswith(f"ticdc: schema registry {server.url} refused the schema for ")
    assert "subject 'tidb_orders-value'" in text
    assert "incompatible with an earlier version under compatibility level BACKWARD" in text
    assert "error code 409: Schema being registered is incompatible" in text
    assert server.schemas("tidb_orders-value") == [V1]


def test_incompatible_names_the_subjects_own_level(server: TestSchemaRegistry) -> None:
    server.set_compatibility("FULL_TRANSITIVE", subject="orders-value")
    with _registry(server) as registry:
        registry.schema_id("orders", RECORD, V1, is_key=False)
        with pytest.raises(RegistryError, match="compatibility level FULL_TRANSITIVE"):
            registry.schema_id("orders", RECORD, INCOMPATIBLE, is_key=False)


def test_errors_are_not_cached(server: TestSchemaRegistry) -> None:
    with _registry(server) as registry:
        registry.schema_id("orders", RECORD, V1, is_key=False)
        for _ in range(2):
            with pytest.raises(RegistryError):
                registry.schema_id("orders", RECORD, INCOMPATIBLE, is_key=False)
        server.set_compatibility("NONE")
        assert registry.schema_id("orders", RECORD, INCOMPATIBLE, is_key=False) >= 1
        assert registry.calls == 4


def test_invalid_schema(server: TestSchemaRegistry) -> None:
    with _registry(server) as registry, pytest.raises(RegistryError) as refused:
        registry.schema_id("orders", RECORD, '{"type":"record","name":"x"}', is_key=False)
    assert refused.value.error_code == 42201  # type: ignore[attr-defined]
    assert "says the schema for subject 'orders-value' is invalid" in str(refused.value)


def test_unknown_schema_id(server: TestSchemaRegistry) -> None:
    with _registry(server) as registry, pytest.raises(RegistryError) as missing:
        registry.schema_text(4242)
    assert missing.value.error_code == 40403  # type: ignore[attr-defined]
    assert f"schema registry {server.url} does not know schema id 4242" in str(missing.value)


def test_shared_instances(server: TestSchemaRegistry) -> None:
    config = RegistryConfig(url=server.url)
    first = ConfluentSchemaRegistry.shared(config)
    assert ConfluentSchemaRegistry.shared(attrs.evolve(config)) is first
    assert ConfluentSchemaRegistry.shared(config, SubjectNameStrategy.RECORD) is not first
    first.schema_id("orders", RECORD, V1, is_key=False)
    ConfluentSchemaRegistry.shared(config).schema_id("orders", RECORD, V1, is_key=False)
    assert server.count() == 1
    first.close()


def test_bad_tls_files_are_a_config_error(tmp_path: pathlib.Path) -> None:
    config = RegistryConfig(url="https://127.0.0.1:1", ca_location=str(tmp_path / "no-ca.pem"))
    registry = ConfluentSchemaRegistry(config)
    with pytest.raises(ConfigError, match="schema-registry-ca") as bad:
        registry.schema_id("orders", RECORD, V1, is_key=False)
    assert bad.value.option == "schema-registry"


def test_url_unset_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as unset:
        ConfluentSchemaRegistry(RegistryConfig(), SubjectNameStrategy.TOPIC)
    assert unset.value.option == "schema-registry"


def test_unreachable_registry_fails_naming_the_url_not_the_password() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    config = RegistryConfig(url=url, user="alice", password=PASSWORD)
    registry = ConfluentSchemaRegistry(config, SubjectNameStrategy.TOPIC, client_options=FAST)
    with pytest.raises(RegistryError) as unreachable:
        registry.schema_id("orders", RECORD, V1, is_key=False)
    text = str(unreachable.value)
    assert text.startswith(f"ticdc: cannot reach schema registry {url} to register the schema")
    assert "subject 'orders-value'" in text
    assert "check option 'schema-registry'" in text
    assert unreachable.value.subject == "orders-value"
    _assert_no_secret(unreachable.value)


def test_silent_registry_times_out() -> None:
    # A socket that accepts connections (the kernel's backlog) but never answers.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        config = RegistryConfig(url=url, timeout_ms=1000)
        options = {**FAST, "max.retries": 0}
        registry = ConfluentSchemaRegistry(config, client_options=options)
        started = time.monotonic()
        with pytest.raises(RegistryError, match="cannot reach schema registry"):
            registry.schema_id("orders", RECORD, V1, is_key=False)
        # bounded by the configured timeout (1 s), with a wide margin for a busy machine
        assert time.monotonic() - started < 20
        registry.close()


# -- credentials ---------------------------------------------------------------------------


def _assert_no_secret(*things: object) -> None:
    for thing in things:
        for text in (str(thing), repr(thing)):
            assert PASSWORD not in text
            assert "w0rd" not in text


def test_credentials_are_sent_and_never_shown(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with TestSchemaRegistry(user="alice", password=PASSWORD) as server:
        config = RegistryConfig(url=server.url, user="alice", password=PASSWORD)
        with ConfluentSchemaRegistry(config, SubjectNameStrategy.TOPIC) as registry:
            schema_id = registry.schema_id("orders", RECORD, V1, is_key=False)
            assert registry.schema_text(schema_id) == V1
            _assert_no_secret(registry, config)

        wrong = attrs.evolve(config, password="not-" + PASSWORD)
        with ConfluentSchemaRegistry(wrong, client_options=FAST) as registry:
            with pytest.raises(RegistryError) as refused:
                registry.schema_id("orders", RECORD, V2, is_key=False)
        text = str(refused.value)
        assert refused.value.error_code == 401  # type: ignore[attr-defined]
        assert "refused the credentials for subject 'orders-value'" in text
        assert "'schema-registry-user' and 'schema-registry-password'" in text
        _assert_no_secret(refused.value, registry, wrong)

        anonymous = attrs.evolve(config, user=None, password=None)
        with ConfluentSchemaRegistry(anonymous, client_options=FAST) as registry:
            with pytest.raises(RegistryError, match="HTTP 401"):
                registry.schema_id("orders", RECORD, V2, is_key=False)
    for record in caplog.records:
        assert PASSWORD not in record.getMessage()
        assert "w0rd" not in record.getMessage()


@pytest.mark.parametrize("quote", [True, False], ids=["encoded", "raw"])
def test_credentials_in_a_url_are_masked(quote: bool) -> None:
    # RegistryConfig refuses credentials in the URL; should one get around that check
    # (here: object.__setattr__ on the frozen config), they are still masked.
    password = urllib.parse.quote(PASSWORD, safe="") if quote else PASSWORD
    config = RegistryConfig(url=f"http://127.0.0.1:{free_port()}")
    host = config.url.removeprefix("http://")  # type: ignore[union-attr]
    object.__setattr__(config, "url", f"http://alice:{password}@{host}")
    registry = ConfluentSchemaRegistry(config, client_options=FAST)
    assert registry.url == f"http://alice:***@{host}"
    _assert_no_secret(registry)
    with pytest.raises((RegistryError, ConfigError)) as failed:
        registry.schema_id("orders", RECORD, V1, is_key=False)
    _assert_no_secret(failed.value)
    assert f"http://alice:***@{host}" in str(failed.value)


@pytest.mark.parametrize("strategy", [SubjectNameStrategy.RECORD, SubjectNameStrategy.TOPIC_RECORD])
def test_the_record_strategies_write_a_table_with_a_not_null_column(
    server: TestSchemaRegistry, strategy: SubjectNameStrategy
) -> None:
    # TiCDC names a table's key and value records alike; under Confluent's record
    # strategies they shared a subject, and a value with a NOT NULL column (a field without
    # a default) was refused as incompatible with the key registered before it.
    from ticdc_sink.codec.protocols import build_encoder
    from ticdc_sink.config import CodecConfig, Protocol
    from ticdc_sink.ddl import parse_mysql_type
    from ticdc_sink.events import Op, RowChange
    from ticdc_sink.schema import Column, Index, TableSchema

    orders = TableSchema(
        "shop",
        "orders",
        (
            Column("id", parse_mysql_type("bigint"), nullable=False, column_id=1),
            Column("amount", parse_mysql_type("int"), nullable=False, column_id=2),
        ),
        (Index("PRIMARY", ("id",), unique=True, primary=True),),
    )
    config = CodecConfig(protocol=Protocol.AVRO, subject_name_strategy=strategy)
    with _registry(server, strategy) as registry:
        encoder = build_encoder(config, orders, build_ts_ms=1, topic="all", registry=registry)
        message = encoder.encode_row(RowChange(orders, Op.INSERT, 10, (1, 5)))
    prefix = "" if strategy is SubjectNameStrategy.RECORD else "all-"
    assert sorted(server.subjects()) == [f"{prefix}{RECORD}", f"{prefix}{RECORD}.Key"]
    [key_schema] = server.schemas(f"{prefix}{RECORD}.Key")
    assert (json.loads(key_schema)["namespace"], json.loads(key_schema)["name"]) == (RECORD, "Key")
    [value_schema] = server.schemas(f"{prefix}{RECORD}")
    assert (json.loads(value_schema)["namespace"], json.loads(value_schema)["name"]) == (
        "default.shop",
        "orders",
    )
    assert message.key is not None and message.value is not None


def test_an_incompatible_schema_under_a_record_strategy_does_not_recommend_it(
    server: TestSchemaRegistry,
) -> None:
    with _registry(server, SubjectNameStrategy.RECORD) as registry:
        registry.schema_id("all", RECORD, V1, is_key=False)
        with pytest.raises(RegistryError) as refused:
            registry.schema_id("all", RECORD, INCOMPATIBLE, is_key=False)
    text = str(refused.value)
    assert "make the change compatible, relax the subject's compatibility level (" in text
    assert "subject-name-strategy=record" not in text
    with _registry(server) as registry:
        registry.schema_id("all", RECORD, V1, is_key=False)
        with pytest.raises(RegistryError, match="or subject-name-strategy=record"):
            registry.schema_id("all", RECORD, INCOMPATIBLE, is_key=False)

"""Who reads what `format("ticdc")` writes: each consumer the interop tests run, its
version, the sink options it needs and its own settings, written once here.

The interop tests (tests/interop/) take a consumer's `options` for their writes and its
`settings` to configure it; docs/reference/consumers.md is this list
rendered at every build of the docs (tests/support/doc_pages.py). Print the table:

    python -m tests.support.consumers

`<registry>` and `<postgres>` in options and settings stand for the addresses a test fills
in (`Consumer.settings_for`).
"""

from __future__ import annotations

import attrs

from tests.support.flink import AVRO_REGISTRY_VERSION, KAFKA_CONNECTOR_VERSION, PYFLINK_VERSION
from tests.support.kafka_connect import CONNECT_VERSION, DEBEZIUM_JDBC_VERSION
from tests.support.spark_kafka import CONNECTORS

__all__ = ["CONSUMERS", "Consumer", "consumers_table"]


@attrs.frozen
class Consumer:
    """One consumer and what it takes to read our topics."""

    key: str
    name: str
    version: str
    protocols: tuple[str, ...]
    #: options for `format("ticdc")` besides brokers, topic, database, table, primary-key
    options: dict[str, str]
    #: the consumer's own settings (Flink table options, connector properties, ...)
    settings: dict[str, str]
    notes: str

    def settings_for(self, **addresses: str) -> dict[str, str]:
        """`settings` with `<registry>` and `<postgres>` filled in (keyword arguments
        `registry=`, `postgres=`)."""
        filled = {}
        for name, value in self.settings.items():
            for placeholder, address in addresses.items():
                value = value.replace(f"<{placeholder}>", address)
            filled[name] = value
        return filled


def _spark_versions() -> str:
    lines: dict[str, list[str]] = {}
    for line, version in CONNECTORS.items():
        lines.setdefault(version, []).append(line)
    return "`spark-sql-kafka-0-10_2.13`, `spark-avro_2.13` " + ", ".join(
        f"{version} (PySpark {' and '.join(spark)})" for version, spark in lines.items()
    )


_FLINK = f"PyFlink {PYFLINK_VERSION}, `flink-sql-connector-kafka` {KAFKA_CONNECTOR_VERSION}"

CONSUMERS: dict[str, Consumer] = {
    c.key: c
    for c in (
        Consumer(
            key="spark-kafka-source",
            name='Spark `format("kafka")` + `from_json`',
            version=_spark_versions(),
            protocols=("simple", "debezium", "canal-json"),
            options={},
            settings={"startingOffsets": "earliest"},
            notes=(
                "`from_json` with the protocol's fields; keep the row changes only (Simple "
                "`type` INSERT/UPDATE/DELETE; Debezium `payload.op` c/u/d; Canal `isDdl` false "
                "and `type` not TIDB_WATERMARK); Simple and Canal values are text and "
                "Debezium's DECIMAL a double: cast them. open-protocol frames and batches "
                "events in binary: not for `from_json`"
            ),
        ),
        Consumer(
            key="spark-kafka-sink",
            name='Spark `format("kafka")` writing, `format("ticdc")` reading',
            version=_spark_versions(),
            protocols=("canal-json",),
            options={"protocol": "canal-json", "enable-tidb-extension": "true"},
            settings={},
            notes=(
                "messages built with `to_json` as TiCDC's, with a `partition` column: "
                "Canal-JSON with `_tidb.commitTs`, "
                "`mysqlType` with lengths (`decimal(10,2)`), and a `TIDB_WATERMARK` to every "
                'partition after the rows (`readStream.format("ticdc")` ends micro-batches there)'
            ),
        ),
        Consumer(
            key="flink-debezium-json",
            name="Flink `debezium-json`",
            version=_FLINK,
            protocols=("debezium",),
            options={
                "protocol": "debezium",
                "enable-tidb-extension": "false",
                "ddl-on-schema-change": "false",
            },
            settings={"format": "debezium-json", "debezium-json.schema-include": "true"},
            notes=(
                "`schema-include` true also with `debezium-disable-schema=true`: TiCDC keeps "
                'the `payload` envelope without the schema. Flink fails on `op: "m"` '
                "watermarks and on schema-change messages, and needs `before` in UPDATEs "
                "(a `_before` on every UPDATE)"
            ),
        ),
        Consumer(
            key="flink-canal-json",
            name="Flink `canal-json`",
            version=_FLINK,
            protocols=("canal-json",),
            options={"protocol": "canal-json", "enable-tidb-extension": "true"},
            settings={"format": "canal-json", "canal-json.ignore-parse-errors": "true"},
            notes=(
                "`ignore-parse-errors` skips TiCDC's `TIDB_WATERMARK` and DDL messages, which "
                "Flink fails on otherwise (or write with `enable-tidb-extension=false` and "
                "`ddl-on-schema-change=false`); UPDATEs need `old` (a `_before` on every UPDATE)"
            ),
        ),
        Consumer(
            key="flink-avro-confluent",
            name="Flink `upsert-kafka` + `avro-confluent`",
            version=f"{_FLINK}, `flink-sql-avro-confluent-registry` {AVRO_REGISTRY_VERSION}",
            protocols=("avro",),
            options={"protocol": "avro", "schema-registry": "<registry>"},
            settings={
                "connector": "upsert-kafka",
                "key.format": "avro-confluent",
                "key.avro-confluent.url": "<registry>",
                "value.format": "avro-confluent",
                "value.avro-confluent.url": "<registry>",
            },
            notes=(
                "`upsert-kafka`, not `kafka`: a DELETE is a tombstone under the row's key, "
                "which only `upsert-kafka` reads as `-D`; a `PRIMARY KEY` on the key columns. "
                "In the tests the registry is Apicurio's Confluent API (`/apis/ccompat/v7`)"
            ),
        ),
        Consumer(
            key="flink-debezium-avro-confluent",
            name="Flink `debezium-avro-confluent`",
            version=f"{_FLINK}, `flink-sql-avro-confluent-registry` {AVRO_REGISTRY_VERSION}",
            protocols=("debezium-avro",),
            options={"protocol": "debezium-avro", "schema-registry": "<registry>"},
            settings={
                "format": "debezium-avro-confluent",
                "debezium-avro-confluent.url": "<registry>",
            },
            notes=(
                "the `kafka` connector, the value only; UPDATEs need `before` "
                "(`debezium-output-old-value=true`, the default, and a `_before` on every UPDATE)"
            ),
        ),
        Consumer(
            key="debezium-jdbc",
            name="Debezium JDBC sink connector (Kafka Connect) into PostgreSQL",
            version=(
                f"`debezium-connector-jdbc` {DEBEZIUM_JDBC_VERSION} (its plugin archive), "
                f"Kafka Connect {CONNECT_VERSION}, PostgreSQL 15"
            ),
            protocols=("debezium",),
            options={
                "protocol": "debezium",
                "debezium-disable-schema": "false",
                "enable-tidb-extension": "false",
            },
            settings={
                "key.converter": "org.apache.kafka.connect.json.JsonConverter",
                "key.converter.schemas.enable": "true",
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable": "true",
                "connector.class": "io.debezium.connector.jdbc.JdbcSinkConnector",
                "connection.url": "<postgres>",
                "insert.mode": "upsert",
                "delete.enabled": "true",
                "primary.key.mode": "record_key",
                "schema.evolution": "basic",
            },
            notes=(
                "a `primary-key` (the Kafka key is the handle key). The connector fails on "
                '`op: "m"` watermarks (`after is not a valid field name`); it skips '
                "schema-change messages, and `schema.evolution=basic` adds a column the rows "
                "gain. TiCDC writes DECIMAL as a double (and binary as base64 text), so a "
                "table the connector creates has `double precision` there; key-changing "
                "UPDATEs arrive as DELETE + INSERT (keep `output-raw-change-event=false`)"
            ),
        ),
        Consumer(
            key="confluent-avro",
            name="confluent-kafka `AvroDeserializer`",
            version="`confluent-kafka[schemaregistry]` >= 2.4 (the project's dependency)",
            protocols=("avro",),
            options={
                "protocol": "avro",
                "schema-registry": "<registry>",
                "enable-tidb-extension": "true",
            },
            settings={"url": "<registry>"},
            notes=(
                "`SchemaRegistryClient` at the registry's Confluent API; keys and values both "
                "Confluent-framed; a DELETE is a tombstone (value `None`) under the key; "
                "`_tidb_op` (c/u) and `_tidb_commit_ts` need `enable-tidb-extension=true`; "
                "`avro-decimal-handling-mode=string` for readers without the `decimal` type"
            ),
        ),
        Consumer(
            key="apache-avro",
            name="Apache `avro` (Python)",
            version="`avro` >= 1.12 (the tests' dependency)",
            protocols=("avro",),
            options={
                "protocol": "avro",
                "schema-registry": "<registry>",
                "enable-tidb-extension": "true",
            },
            settings={},
            notes=(
                "strip the magic byte and the 4-byte schema id, fetch the schema "
                "(`GET /schemas/ids/<id>`), then `DatumReader`: the same records as "
                "confluent-kafka's"
            ),
        ),
    )
}

_HEADER = (
    '| consumer | version | reads | `format("ticdc")` options | its settings | notes |\n'
    "| --- | --- | --- | --- | --- | --- |\n"
)


def _pairs(values: dict[str, str]) -> str:
    return ", ".join(f"`{name}={value}`" for name, value in values.items()) or "(defaults)"


def consumers_table() -> str:
    """The "Who reads what we write" table (docs/reference/consumers.md)."""
    rows = [
        f"| {c.name} | {c.version} | {', '.join(f'`{p}`' for p in c.protocols)} | "
        f"{_pairs(c.options)} | {_pairs(c.settings)} | {c.notes} |\n"
        for c in CONSUMERS.values()
    ]
    return _HEADER + "".join(rows)


if __name__ == "__main__":
    print(consumers_table(), end="")

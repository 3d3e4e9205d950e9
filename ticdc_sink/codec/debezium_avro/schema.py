"""debezium-avro schemas (pingcap/ticdc `debezium/avro.go`, `codec.go` with
`isDebeziumAvro`): the Kafka Connect schemas of a table's key and envelope, and their Avro
form as TiCDC's `toAvroSchema` writes it for the registry.

Connect schemas differ from the JSON protocol's (`debezium.schema`): every column is
optional; binary strings are `bytes`; DECIMAL is `org.apache.kafka.connect.data.Decimal`
bytes (`avro-decimal-handling-mode=precise`) or a string; BIGINT UNSIGNED a string with
`avro-bigint-unsigned-handling-mode=string`; names are `<cluster>.<db>.<table>` (value),
`...<table>Key`, `...<table>Envelope` and `<cluster>.<db>.Source`, each part sanitised;
`source` has no `sequence`, an unnamed `snapshot`, a required `table` and always
`commit_ts`, `cluster_id`; the envelope has no `transaction` and a required `ts_ms`. Field
schemas carry no `default`, so Avro fields get only `"default": null` (all optional).

The Avro text is Go's `json.Marshal` of maps: keys sorted. A struct is a record named by its
connect name (sanitised; the parts before the last dot its namespace), with
`connect.name`, `connect.version`, `connect.parameters`; a field has `connect.field` (the
column name as written) and, with enable-tidb-extension, `tidb_type`; int8/int16 are `int`
with `connect.type`. A record met again is referenced by its full name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from ticdc_sink.codec.choices import AvroBigintUnsignedHandling, AvroDecimalHandling
from ticdc_sink.codec.common import sanitize_name
from ticdc_sink.codec.debezium.schema import connect_type, tidb_type
from ticdc_sink.codec.mysql import ValueKind, value_kind
from ticdc_sink.errors import SchemaError
from ticdc_sink.schema import Column, TableSchema

__all__ = [
    "DECIMAL_NAME",
    "TableSchemas",
    "column_schema",
    "to_avro",
]

DECIMAL_NAME = "org.apache.kafka.connect.data.Decimal"

#: `source` (codec.go writeSourceSchema with isDebeziumAvro): (field, type, optional).
_SOURCE_FIELDS = (
    ("version", "string", False),
    ("connector", "string", False),
    ("name", "string", False),
    ("ts_ms", "int64", False),
    ("snapshot", "string", True),
    ("db", "string", False),
    ("table", "string", False),
    ("server_id", "int64", False),
    ("gtid", "string", True),
    ("file", "string", False),
    ("pos", "int64", False),
    ("row", "int32", False),
    ("thread", "int64", True),
    ("query", "string", True),
    ("commit_ts", "int64", False),
    ("cluster_id", "string", False),
)

if TYPE_CHECKING:
    from ticdc_sink.codec.config import CodecConfig


def column_schema(column: Column, kind: ValueKind, config: CodecConfig) -> dict[str, Any]:
    """The Connect field schema of a column (codec.go writeDebeziumFieldSchema)."""
    kind_name, name, parameters = connect_type(column, kind)
    t = column.type
    schema: dict[str, Any] = {"field": column.name, "optional": True}
    if kind is ValueKind.BINARY:
        kind_name = "bytes"
    elif kind is ValueKind.UINT and t.base == "bigint":
        if config.avro_bigint_unsigned_handling_mode is AvroBigintUnsignedHandling.STRING:
            kind_name = "string"
    elif kind is ValueKind.DECIMAL:
        if config.avro_decimal_handling_mode is AvroDecimalHandling.PRECISE:
            precision = t.flen if t.flen > 0 else 10
            scale = t.scale if t.scale is not None and t.scale >= 0 else 0
            kind_name, name = "bytes", DECIMAL_NAME
            parameters = orjson.dumps({"precision": str(precision), "scale": str(scale)}).decode()
        else:
            kind_name = "string"
    schema["type"] = kind_name
    if name is not None:
        schema["name"] = name
        if kind not in (ValueKind.VECTOR, ValueKind.DECIMAL):
            schema["version"] = 1
    if parameters is not None:
        schema["parameters"] = orjson.loads(parameters)
    if config.enable_tidb_extension:
        schema["tidb_type"] = tidb_type(column.type)
    return schema


def _go_map(items: dict[str, Any]) -> dict[str, Any]:
    return dict(sorted(items.items()))


def _metadata(out: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """addConnectMetadata, then the keys sorted as Go marshals a map."""
    if schema.get("name"):
        out["connect.name"] = schema["name"]
    if schema.get("version"):
        out["connect.version"] = schema["version"]
    if schema.get("parameters"):
        out["connect.parameters"] = _go_map(schema["parameters"])
    return _go_map(out)


def _full_name(name: str) -> str:
    return ".".join(sanitize_name(part) for part in name.split("."))


_PRIMITIVES = {
    "boolean": "boolean",
    "string": "string",
    "bytes": "bytes",
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "int64": "long",
    "float": "float",
    "double": "double",
}


def to_avro(schema: dict[str, Any], defined: set[str]) -> Any:
    """The Avro schema of a Connect schema (avro.go toAvroSchema); `defined` holds the
    record names written so far."""
    kind = schema["type"]
    if kind == "struct":
        full = _full_name(schema["name"])
        if full in defined:
            return full
        defined.add(full)
        namespace, _, name = full.rpartition(".")
        fields = []
        for field in schema["fields"]:
            avro_type = to_avro(field, defined)
            out: dict[str, Any] = {"name": sanitize_name(field["field"]), "type": avro_type}
            out["connect.field"] = field["field"]
            if field.get("tidb_type"):
                out["tidb_type"] = field["tidb_type"]
            if field.get("optional"):
                out["type"] = ["null", avro_type]
                out["default"] = None
            fields.append(_go_map(out))
        record: dict[str, Any] = {"type": "record", "name": name, "fields": fields}
        if namespace:
            record["namespace"] = namespace
        return _metadata(record, schema)
    if kind == "bytes" and schema.get("name") == DECIMAL_NAME:
        parameters = schema["parameters"]
        decimal = {
            "type": "bytes",
            "logicalType": "decimal",
            "precision": int(parameters["precision"]),
            "scale": int(parameters["scale"]),
        }
        return _metadata(decimal, schema)
    avro_type = _PRIMITIVES[kind]
    plain = not (schema.get("name") or schema.get("version") or schema.get("parameters"))
    if plain and kind not in ("int8", "int16"):
        return avro_type
    out = {"type": avro_type}
    if kind in ("int8", "int16"):
        out["connect.type"] = kind
    return _metadata(out, schema)


class TableSchemas:
    """One table's Connect schemas, their Avro form, and the record names (TiCDC's
    `keySchemaName`, `envelopeSchemaName`, `valueSchemaName`, `sourceSchemaName`).

    Raises:
        SchemaError: a column type Debezium cannot carry, or two columns whose names
            sanitise to one Avro field.
    """

    def __init__(self, config: CodecConfig, table: TableSchema) -> None:
        where = f"table {table.database}.{table.table}"
        namespace = f"{sanitize_name(config.debezium_cluster_name)}.{sanitize_name(table.database)}"
        base = f"{namespace}.{sanitize_name(table.table)}"
        self.value_name = base
        self.key_name = base + "Key"
        self.envelope_name = base + "Envelope"
        self.kinds: list[ValueKind] = []
        fields = []
        seen: dict[str, str] = {}
        for column in table.columns:
            try:
                kind = value_kind(column)
            except SchemaError as exc:
                raise SchemaError(f"{where}: {exc.message}", column=column.name) from None
            avro_name = sanitize_name(column.name)
            if avro_name in seen:
                raise SchemaError(
                    f"{where}: columns {seen[avro_name]!r} and {column.name!r} both become "
                    f"Avro field {avro_name!r} (names are sanitised to [A-Za-z0-9_]); "
                    "rename one of them",
                    column=column.name,
                )
            seen[avro_name] = column.name
            self.kinds.append(kind)
            fields.append(column_schema(column, kind, config))
        self.key = {
            "type": "struct",
            "name": self.key_name,
            "optional": False,
            "fields": [fields[i] for i in table.handle_key_indexes],
        }
        source = {
            "type": "struct",
            "name": f"{namespace}.Source",
            "field": "source",
            "optional": False,
            "fields": [
                {"type": kind, "optional": optional, "field": name}
                for name, kind, optional in _SOURCE_FIELDS
            ],
        }
        image = {"type": "struct", "optional": True, "name": base, "fields": fields}
        self.envelope = {
            "type": "struct",
            "optional": False,
            "name": self.envelope_name,
            "version": 1,
            "fields": [
                {**image, "field": "before"},
                {**image, "field": "after"},
                source,
                {"type": "string", "optional": False, "field": "op"},
                {"type": "int64", "optional": False, "field": "ts_ms"},
            ],
        }
        self.key_avro = to_avro(self.key, set())
        self.envelope_avro = to_avro(self.envelope, set())

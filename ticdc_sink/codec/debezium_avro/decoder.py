"""debezium-avro decoder (`protocol=debezium-avro`, pingcap/ticdc `debezium/avro_decoder.go`):
Confluent-framed Avro key and value records back into events.

The value's writer schema (by its registry id, from `schema_for_id`) is read back into the
Connect field schemas it was made from (`connect.field`, `connect.name`,
`connect.parameters`, `connect.type`, `tidb_type`), and the record into the Debezium
payload, so that `codec.debezium.decoder` types the values as it does for the JSON protocol
(its docstring lists them): bytes, Bits and DECIMALs (exact, or their text) arrive as
Avro gives them. Without enable-tidb-extension the fields carry no `tidb_type`: binary
strings still read as bytes and precise DECIMALs as decimals, but a DECIMAL in string mode
reads as text and BIGINT UNSIGNED as the long or text written.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import fastavro
import orjson

from ticdc_sink.codec.avro.confluent import WriterSchemas, read_body
from ticdc_sink.codec.avro.schema import as_fastavro_reads_it
from ticdc_sink.codec.debezium.decoder import DebeziumDecoder
from ticdc_sink.decode import (
    DecodedDDL,
    DecodedRow,
    DecodedWatermark,
    DecoderSettings,
)
from ticdc_sink.errors import DecodeError
from ticdc_sink.schema import TableSchema

__all__ = ["DebeziumAvroDecoder", "build_decoder"]

_CONNECT_TYPES = {
    "boolean": "boolean",
    "string": "string",
    "bytes": "bytes",
    "int": "int32",
    "long": "int64",
    "float": "float",
    "double": "double",
}


def _connect_schema(avro: Any, named: dict[str, Any], field_name: str = "") -> dict[str, Any]:
    """The Connect schema an Avro schema was written from (avro.go toAvroSchema, undone);
    `named` gathers the records met so far by full name (a record met again is its name)."""
    optional = isinstance(avro, list)
    if optional:
        avro = next(branch for branch in avro if branch != "null")
    out: dict[str, Any] = {"optional": optional}
    if field_name:
        out["field"] = field_name
    if isinstance(avro, str) and avro in named:
        return {**named[avro], **out}
    if isinstance(avro, str):
        out["type"] = _CONNECT_TYPES.get(avro, "string")
        return out
    kind = avro.get("type")
    if kind == "record":
        out["type"] = "struct"
        namespace = avro.get("namespace")
        full = f"{namespace}.{avro['name']}" if namespace else str(avro.get("name"))
        named[full] = out
        out["fields"] = [
            {
                **_connect_schema(f["type"], named, str(f.get("connect.field", f["name"]))),
                **({"tidb_type": f["tidb_type"]} if "tidb_type" in f else {}),
                "avro_name": f["name"],
            }
            for f in avro.get("fields", ())
        ]
    else:
        out["type"] = avro.get("connect.type") or _CONNECT_TYPES.get(kind, "string")
    if "connect.name" in avro:
        out["name"] = avro["connect.name"]
    if "connect.parameters" in avro:
        out["parameters"] = avro["connect.parameters"]
    return out


def _payload(record: Any, schema: dict[str, Any]) -> Any:
    """The Debezium JSON payload of an Avro value: fields by their Connect names, bytes as
    base64 text (as the JSON protocol writes them)."""
    if record is None:
        return None
    if schema["type"] == "struct":
        fields = schema.get("fields") or ()
        return {f["field"]: _payload(record.get(f["avro_name"]), f) for f in fields}
    if isinstance(record, bytes):
        return base64.b64encode(record).decode("ascii")
    return record


class _Schema:
    """One writer schema, parsed, and the Connect schema it stands for."""

    def __init__(self, schema_id: int, text: str) -> None:
        try:
            avro = orjson.loads(text)
            self.parsed = fastavro.parse_schema(as_fastavro_reads_it(avro))
        except Exception as exc:  # orjson and fastavro raise several types
            raise DecodeError(f"schema id {schema_id} is not a valid Avro schema: {exc}") from exc
        if not isinstance(avro, dict) or avro.get("type") != "record":
            raise DecodeError(f"schema id {schema_id} is not an Avro record schema")
        self.connect = _connect_schema(avro, {})

    def read(self, body: bytes, what: str) -> Any:
        return _payload(read_body(self.parsed, body, what), self.connect)


class DebeziumAvroDecoder:
    """Decodes debezium-avro records (key and value as read from Kafka) into DecodedRow.

    `schema_for_id(id)` gives a writer schema's JSON text (a registry client's lookup),
    asked once per id.
    """

    def __init__(self, schema_for_id: Callable[[int], str], *, time_zone: str = "UTC") -> None:
        self._schemas = WriterSchemas(schema_for_id, _Schema, protocol="debezium-avro")
        self._debezium = DebeziumDecoder(time_zone=time_zone)

    def _read(self, data: bytes, what: str) -> tuple[dict[str, Any], Any]:
        schema, body = self._schemas.unframe(data, what)
        return schema.connect, schema.read(body, what)

    def _message(self, value: bytes | None) -> dict[str, Any]:
        if not value:
            raise DecodeError("a debezium-avro message has no value; TiCDC writes no tombstones")
        schema, payload = self._read(value, "value")
        return {"schema": schema, "payload": payload}

    def decode_message(
        self, key: bytes | None, value: bytes | None
    ) -> DecodedRow | DecodedWatermark | DecodedDDL:
        """The event of one Kafka record.

        Raises:
            DecodeError: no value, not Confluent-framed, or not a Debezium envelope.
        """
        return self._debezium.decode_envelope(self._message(value))

    def row_table(self, key: bytes | None, value: bytes | None) -> TableSchema | None:
        """The table a row message implies: the `after` (or `before`) fields' types
        (`codec.debezium.decoder`) and the key record's fields as the primary key.

        Raises:
            DecodeError: as `decode_message`.
        """
        message = self._message(value)
        primary: tuple[str, ...] = ()
        if key:
            _, key_payload = self._read(key, "key")
            primary = tuple(key_payload)
        return self._debezium.envelope_table(message, primary)


def build_decoder(settings: DecoderSettings) -> DebeziumAvroDecoder:
    """The decoder `decoder_for` gives for protocol debezium-avro.

    Raises:
        DecodeError: no `schema_for_id`.
    """
    if settings.schema_for_id is None:
        raise DecodeError(
            "protocol debezium-avro needs a schema registry to decode: give schema_for_id, "
            "a lookup of writer schemas by id (ticdc-sink decode --schema-registry URL)"
        )
    return DebeziumAvroDecoder(settings.schema_for_id, time_zone=settings.time_zone)

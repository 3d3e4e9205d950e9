"""Confluent framing of the avro protocol's keys and values (tiflow
`avro/confluent_schema_registry.go`): `0x00`, the big-endian int32 schema id, the body;
key and value each carry their own id.

Schema ids come from the injected `SchemaRegistry` (codec/__init__.py), asked once per
encoder for the key and once for the value, lazily on the first message that needs them,
so the driver can build an encoder with `registry=None` to validate a table. `SchemaHeaders`
holds them for the row and the column-wise paths alike, so the registry sees the same
calls whichever path renders a table's first message. No I/O here.
"""

from __future__ import annotations

from ticdc_sink.codec import SchemaRegistry
from ticdc_sink.errors import ConfigError

__all__ = ["CONFLUENT_MAGIC", "SchemaHeaders", "frame"]

#: First byte of a Confluent-framed message.
CONFLUENT_MAGIC = 0


def frame(schema_id: int, body: bytes) -> bytes:
    """A Confluent-framed message: magic byte, big-endian int32 id, body."""
    return bytes((CONFLUENT_MAGIC,)) + schema_id.to_bytes(4, "big", signed=True) + body


class SchemaHeaders:
    """The Confluent header (magic byte and schema id) of one table's keys and of its
    values, each asked of the registry on first use."""

    def __init__(
        self,
        registry: SchemaRegistry | None,
        *,
        topic: str,
        record_name: str,
        key_record_name: str,
        key_schema: str | None,
        value_schema: str,
        protocol: str = "avro",
    ) -> None:
        self._registry = registry
        self._protocol = protocol
        self._topic = topic
        self._record_names = {True: key_record_name, False: record_name}
        self._schemas = {True: key_schema, False: value_schema}
        self._headers: dict[bool, bytes] = {}

    def key(self) -> bytes:
        """The header of the key record (the table has a handle key).

        Raises:
            ConfigError: built without a registry.
            RegistryError: from the registry.
        """
        return self._headers.get(True) or self._fetch(True)

    def value(self) -> bytes:
        """The header of the value record.

        Raises:
            ConfigError: built without a registry.
            RegistryError: from the registry.
        """
        return self._headers.get(False) or self._fetch(False)

    def _fetch(self, is_key: bool) -> bytes:
        registry = self._registry
        if registry is None:
            raise ConfigError(
                f"protocol {self._protocol} needs a schema registry to encode rows; set option "
                "schema-registry (the encoder was built without one)",
                option="schema-registry",
            )
        schema = self._schemas[is_key]
        assert schema is not None
        name = self._record_names[is_key]
        schema_id = registry.schema_id(self._topic, name, schema, is_key=is_key)
        header = self._headers[is_key] = frame(schema_id, b"")
        return header

"""Confluent-framed Avro as the decoders that read it (`avro`, `debezium-avro`) take it
apart: the frame (magic byte 0, a 4-byte big-endian schema id, the body), the writer
schemas by id (asked of the registry once per id, the most recently used `max_schemas`
kept), and a body read with its writer schema to its last byte.
"""

from __future__ import annotations

import io
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import fastavro

from ticdc_sink.codec.avro.framing import CONFLUENT_MAGIC
from ticdc_sink.errors import DecodeError

__all__ = ["WriterSchemas", "read_body"]

T = TypeVar("T")


class WriterSchemas(Generic[T]):
    """The writer schemas of one decoder, each made once (`make(id, text)`) from the text
    `schema_for_id(id)` gives (a registry client's lookup); `dropped(id)` is told of each
    schema let go, for what the decoder keeps beside it."""

    def __init__(
        self,
        schema_for_id: Callable[[int], str],
        make: Callable[[int, str], T],
        *,
        protocol: str,
        max_schemas: int = 1024,
        dropped: Callable[[int], object] | None = None,
    ) -> None:
        self._schema_for_id = schema_for_id
        self._make = make
        self._protocol = protocol
        self._max_schemas = max_schemas
        self._dropped = dropped
        self._schemas: OrderedDict[int, T] = OrderedDict()

    def get(self, schema_id: int) -> T:
        """The schema of `schema_id`.

        Raises:
            DecodeError: an id the registry does not know, or as `make`.
        """
        schema = self._schemas.get(schema_id)
        if schema is not None:
            self._schemas.move_to_end(schema_id)
            return schema
        try:
            text = self._schema_for_id(schema_id)
        except LookupError as exc:
            raise DecodeError(f"schema id {schema_id} is unknown to the registry") from exc
        schema = self._make(schema_id, text)
        self._schemas[schema_id] = schema
        if len(self._schemas) > self._max_schemas:
            gone, _ = self._schemas.popitem(last=False)
            if self._dropped is not None:
                self._dropped(gone)
        return schema

    def unframe(self, data: bytes, what: str) -> tuple[T, bytes]:
        """The writer schema and the body of a framed record (`what`: key or value).

        Raises:
            DecodeError: not Confluent-framed, or as `get`.
        """
        if len(data) < 5:
            raise DecodeError(
                f"the {what} has {len(data)} bytes; a Confluent-framed Avro record has at "
                "least 5 (magic byte 0 and a 4-byte schema id)"
            )
        if data[0] != CONFLUENT_MAGIC:
            raise DecodeError(
                f"the {what} starts with byte 0x{data[0]:02x}, not the Confluent magic byte "
                f"0x00; is the topic written by protocol {self._protocol}?"
            )
        schema_id = int.from_bytes(data[1:5], "big", signed=True)
        return self.get(schema_id), bytes(data[5:])


def read_body(parsed: Any, body: bytes, what: str) -> Any:
    """`body` read with `parsed` (fastavro's parsed writer schema), every byte of it.

    Raises:
        DecodeError: a body that does not decode, or bytes left after the record.
    """
    stream = io.BytesIO(body)
    try:
        record = fastavro.schemaless_reader(stream, parsed, None)
    except Exception as exc:  # EOFError, ValueError, struct.error, ...
        raise DecodeError(f"the {what} does not decode with its writer schema: {exc}") from exc
    if stream.tell() != len(body):
        raise DecodeError(f"the {what} has {len(body) - stream.tell()} bytes after its Avro record")
    return record

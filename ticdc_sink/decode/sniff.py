"""Which protocol a Kafka record looks like, from its envelope alone: the hint a reader
gives when a message does not decode with the protocol it was told (a `protocol`,
`encoding-format` or `large-message-handle-compression` other than the writer's).

Each protocol's envelope, as TiCDC writes it (`ticdc_sink.codec`):

    open-protocol  a key of at least 16 bytes whose first 8 are version 1, big-endian
    avro           a value (or, for a tombstone, a key) of magic byte 0 and a 4-byte id
    simple, avro   a value that starts with 0x16 and reads as the Simple Avro Message
    simple, json   a JSON object with `version` and `buildTs`
    canal-json     a JSON object with `isDdl` and `type`
    debezium       a JSON object with `payload` (and `schema`), or with `source` and `op`
                   (`debezium-disable-schema=true`)

A value that reads as none of these is tried again decompressed with snappy and lz4
(TiCDC compresses values with `large-message-handle-compression`, never avro's). Called on
the error path only: it costs a JSON parse or two per message.

Knows the wire shapes and nothing of Spark or Kafka.
"""

from __future__ import annotations

import struct

import attrs
import orjson

from ticdc_sink.codec.compression import Compression, decompress
from ticdc_sink.codec.open_protocol.message import BATCH_VERSION
from ticdc_sink.codec.protocols import decoder_for, find_protocol, protocol_specs
from ticdc_sink.decode import DecoderSettings
from ticdc_sink.errors import DecodeError

__all__ = ["Sniffed", "misread_hint", "protocol_of", "sniff_message"]

_VERSION = struct.Struct(">Q")


@attrs.frozen
class Sniffed:
    """How a record reads: the options `protocol`, `encoding-format` and
    `large-message-handle-compression` a reader would need."""

    protocol: str
    encoding_format: str = "json"
    compression: str = "none"

    def describe(self) -> str:
        compressed = "" if self.compression == "none" else f"{self.compression}-compressed "
        encoded = " in Avro" if self.encoding_format == "avro" else ""
        what = f"{compressed}{self.protocol}"
        return f"{'an' if what[0] in 'aeio' else 'a'} {what} message{encoded}"

    def options(self) -> dict[str, str]:
        return {
            "protocol": self.protocol,
            "encoding-format": self.encoding_format,
            "large-message-handle-compression": self.compression,
        }


def misread_hint(decoder: object, key: bytes | None, value: bytes | None) -> str:
    """A clause for the error of a record `decoder` did not decode: what the record looks
    like and the options that read it ("" when it looks like the decoder's own)."""
    expected = protocol_of(decoder)
    found = sniff_message(key, value)
    if found is None:
        return "; it does not look like a message of any TiCDC protocol"
    wanted, given = found.options(), expected.options()
    spec = find_protocol(found.protocol)
    if spec is None or not spec.reads("encoding-format"):
        del wanted["encoding-format"], given["encoding-format"]
    changes = [f"{k}={v}" for k, v in wanted.items() if given[k] != v]
    if not changes:
        return ""
    return f"; it looks like {found.describe()}: set option {', '.join(changes)}"


def sniff_message(key: bytes | None, value: bytes | None) -> Sniffed | None:
    """What the record looks like (module docstring); None when it looks like no
    protocol's message."""
    if key is not None and len(key) >= 16 and _VERSION.unpack_from(key)[0] == BATCH_VERSION:
        return Sniffed("open-protocol")
    if value is None:
        return Sniffed("avro") if _confluent(key) else None
    if _confluent(value):
        return Sniffed("avro")
    found = _shape(value)
    if found is not None:
        return Sniffed(*found)
    for compression in (Compression.SNAPPY, Compression.LZ4):
        try:
            plain = decompress(compression, value)
        except DecodeError:
            continue
        found = _shape(plain)
        if found is not None:
            return Sniffed(*found, compression=compression.value)
    return None


def _confluent(data: bytes | None) -> bool:
    return data is not None and len(data) >= 5 and data[0] == 0


def _shape(value: bytes) -> tuple[str, str] | None:
    """(protocol, encoding format) of an uncompressed value, or None."""
    if value[:1] == b"\x16":
        avro = DecoderSettings(encoding_format="avro")
        try:
            decoder_for("simple", avro).decode_message(None, value)
        except Exception:  # noqa: BLE001 (a guess: anything failing is "not this")
            return None
        return "simple", "avro"
    try:
        document = orjson.loads(value)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(document, dict):
        return None
    if "version" in document and "buildTs" in document:
        return "simple", "json"
    if "isDdl" in document and "type" in document:
        return "canal-json", "json"
    if "payload" in document or ("source" in document and "op" in document):
        return "debezium", "json"
    return None


def protocol_of(decoder: object) -> Sniffed:
    """The options a decoder reads with (its protocol: the spec whose `build_decoder` is
    of the decoder's module; `encoding_format` and `compression` where it has them)."""
    module = type(decoder).__module__
    name = next((s.name for s in protocol_specs() if s.build_decoder.__module__ == module), module)
    compression = getattr(decoder, "compression", Compression.NONE)
    return Sniffed(
        name,
        encoding_format=str(getattr(decoder, "encoding_format", "json")),
        compression=getattr(compression, "value", str(compression)),
    )

"""Simple Avro DML messages read as a read needs them (`SimpleDecoder.plain_row`): the
envelope checked as it is read, the `data` and `old` maps into dicts of exactly the
values fastavro gives (`SimpleDecoder.decode_message` reads with fastavro), in a straight
line of code written for the DML record of tiflow's `message.json` (whose layout never
changes), not walked from the schema per message.

`read_plain(value)` gives the fields `decoder.simple_row_fields` gives for the message's
payload, or None for anything it does not vouch for: a message that is not a DML, or
whose envelope is not a plain row's (a version other than 1, a checksum, a claim check,
handleKeyOnly true, images that do not fit the type), a text that is not UTF-8, a union
index or the version in more bytes than TiCDC writes, a map written with block sizes, a
varint beyond 64 bits, or bytes after the record. The caller leaves those messages to
`decode_message`, whose reading stays the reference.

Map values (the union `[null, long, float, double, string, bytes, Timestamp,
UnsignedBigint]`): None, int, float (a float's float32 value), float, str, bytes,
{"location", "value"} and {"value"}, as fastavro gives them.

Knows Avro's binary encoding and the Simple DML record; nothing of Arrow, Spark or Kafka.
"""

from __future__ import annotations

import struct
from typing import Any

from ticdc_sink.codec.avro_binary import read_length, read_varint

__all__ = ["DML_PREFIX", "PlainFields", "read_plain"]

#: What every Simple Avro DML message starts with: the `Message` branch (11), the DML
#: type (3) and the payload's DML branch (3).
DML_PREFIX = b"\x16\x06\x06"

#: op, commit ts, database, table, schema version (both longs as Go's uint64), data, old.
PlainFields = tuple[str, int, str, str, int, dict[str, Any] | None, dict[str, Any] | None]

_MASK64 = (1 << 64) - 1
_HEAD = DML_PREFIX + b"\x02"
_NULLS = b"\x00\x00\x00"
_FALSE = b"\x00\x02\x00"  # handleKeyOnly false, then the checksum's null below
_OPS = {0: "INSERT", 2: "UPDATE", 4: "DELETE"}
_FLOAT = struct.Struct("<f").unpack_from
_DOUBLE = struct.Struct("<d").unpack_from


def _image(buf: bytes, pos: int) -> tuple[dict[str, Any], int]:
    """A `data` or `old` map at `pos` (after its union index) and the position after it.

    Raises:
        ValueError (UnicodeDecodeError among them), IndexError, struct.error: bytes
            this reader does not vouch for (module docstring).
    """
    image: dict[str, Any] = {}
    while True:
        count = buf[pos]
        pos += 1
        if count & 0x81:  # not a one-byte count of 0..63
            count, pos = read_length(buf, pos, count)  # a negative one: with block sizes
        else:
            count >>= 1
        if not count:
            return image, pos
        for _ in range(count):
            n = buf[pos]
            if n & 0x81:
                n, pos = read_length(buf, pos + 1, n)
            else:
                n >>= 1
                pos += 1
            key = buf[pos : pos + n].decode()
            pos += n + 1
            branch = buf[pos - 1]
            if branch == 8:  # string
                n = buf[pos]
                if n & 0x81:
                    n, pos = read_length(buf, pos + 1, n)
                else:
                    n >>= 1
                    pos += 1
                image[key] = buf[pos : pos + n].decode()
                pos += n
            elif branch == 2:  # long
                n = buf[pos]
                if n & 0x80:
                    image[key], pos = read_varint(buf, pos + 1, n)
                else:
                    image[key] = (n >> 1) ^ -(n & 1)
                    pos += 1
            elif branch == 0:
                image[key] = None
            elif branch == 6:
                image[key] = _DOUBLE(buf, pos)[0]
                pos += 8
            elif branch == 4:
                image[key] = _FLOAT(buf, pos)[0]
                pos += 4
            elif branch == 10:  # bytes
                n = buf[pos]
                if n & 0x81:
                    n, pos = read_length(buf, pos + 1, n)
                else:
                    n >>= 1
                    pos += 1
                image[key] = buf[pos : pos + n]
                pos += n
            elif branch == 12:  # Timestamp {location, value}
                location, pos = _text(buf, pos)
                text, pos = _text(buf, pos)
                image[key] = {"location": location, "value": text}
            elif branch == 14:  # UnsignedBigint {value}
                number, pos = _long(buf, pos)
                image[key] = {"value": number}
            else:
                raise ValueError("a union index out of range")


def _long(buf: bytes, pos: int) -> tuple[int, int]:
    b = buf[pos]
    if b & 0x80:
        return read_varint(buf, pos + 1, b)
    return (b >> 1) ^ -(b & 1), pos + 1


def _text(buf: bytes, pos: int) -> tuple[str, int]:
    b = buf[pos]
    pos += 1
    if b & 0x81:
        n, pos = read_length(buf, pos, b)
    else:
        n = b >> 1
    return buf[pos : pos + n].decode(), pos + n


def read_plain(value: bytes) -> PlainFields | None:
    """The plain row fields of a Simple Avro message, or None (module docstring)."""
    # The fields up to the maps by the helpers; the maps' entries (`_image`, a dozen a
    # message) read inline, each length and union index in the one-byte form TiCDC
    # writes, any other form through `read_length` and `read_varint`.
    if value[:4] != _HEAD:  # the DML prefix, then version 1 in its one-byte form
        return None
    try:
        database, pos = _text(value, 4)
        table, pos = _text(value, pos)
        _, pos = _long(value, pos)  # tableID
        op = _OPS.get(value[pos])
        commit_ts, pos = _long(value, pos + 1)
        _, pos = _long(value, pos)  # buildTs
        version, pos = _long(value, pos)
        # claimCheckLocation null, handleKeyOnly null or false, checksum null
        tail = value[pos : pos + 3]
        if tail == _NULLS:
            pos += 3
        elif tail == _FALSE and value[pos + 3] == 0:
            pos += 4
        else:
            return None
        data = old = None
        branch = value[pos]
        if branch == 2:
            data, pos = _image(value, pos + 1)
        elif branch == 0:
            pos += 1
        else:
            return None
        branch = value[pos]
        if branch == 2:
            old, pos = _image(value, pos + 1)
        elif branch == 0:
            pos += 1
        else:
            return None
    except (ValueError, IndexError, struct.error):
        return None
    if pos != len(value) or op is None:
        return None
    if op == "INSERT":
        fits = data is not None and old is None
    elif op == "UPDATE":
        fits = data is not None
    else:
        fits = data is None and old is not None
    if not fits:
        return None
    return op, commit_ts & _MASK64, database, table, version & _MASK64, data, old

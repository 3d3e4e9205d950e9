"""Avro binary read by code generated per writer schema: a run of records at a time into
column lists (`record_reader`, avro's column-wise read); and the varints and lengths of
Avro's binary encoding (`read_varint`, `read_length`), which Simple Avro's DML reader
(`codec/simple/avro_dml.py`) shares.

fastavro reads a record into a dict through its generic, schema-walking reader: about
10 µs for the 13 fields of a TiCDC avro row, more than the rest of a read. The code
generated here for one record schema reads the fields in a straight line (the union
indexes, zig-zag varints, IEEE floats and length-prefixed bytes of the Avro
specification), appending each value to its column's list: about a third of that.

It reads only what it can vouch for and refuses the rest, so that a value it gives is
always the value fastavro gives for the same bytes:

- `record_reader` gives None for a schema with anything but records of the primitive
  types, unions of null and one of them (either order), and nested records (nullable or
  not); logical types other than `decimal` on bytes are refused, and a decimal's bytes
  are given raw (the caller builds the decimal).
- `RecordReader.read` raises ValueError (or IndexError, struct.error) for a body that is
  not exactly one record of the schema, and also for bytes fastavro might read but this
  reader does not vouch for: a union index or boolean not in its one-byte form, a varint
  beyond 64 bits, a negative length. Strings are given as their raw bytes: the caller
  checks their UTF-8 (Arrow's cast to string checks it as Python's strict decoder does).

A reader that meets an error here lets the row path (fastavro) decode the same
messages, so its errors and skipped messages stay the reference.

Knows Avro's binary encoding; nothing of TiCDC, Arrow, Spark or Kafka.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import Any

import attrs

__all__ = [
    "Leaf",
    "RecordReader",
    "read_length",
    "read_varint",
    "record_reader",
]

_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_LIMIT = 1 << 64
# The value of each one-byte zig-zag varint (0..127).
_ZIGZAG = tuple((b >> 1) ^ -(b & 1) for b in range(128))
# Generated readers by their source: compiling one costs a couple of milliseconds, more
# than a task of a few hundred records spends reading them, and each task's read (and a
# Python worker runs many) asks for its schemas' readers anew. At most _COMPILED_KEPT.
_COMPILED: dict[str, Callable[[bytes, Iterable[tuple[int, int]]], list[list[Any]]]] = {}
_COMPILED_KEPT = 256


def read_varint(buf: bytes, pos: int, first: int) -> tuple[int, int]:
    """A zig-zag varint whose first byte `first` (at pos - 1) has its high bit set; the
    value and the position after it.

    Raises:
        ValueError: beyond 64 bits (fastavro's C reader would wrap it).
        IndexError: the buffer ends inside it.
    """
    n = first & 0x7F
    shift = 7
    while True:
        b = buf[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
    if n >= _LIMIT:
        raise ValueError("a varint beyond 64 bits")
    return (n >> 1) ^ -(n & 1), pos


def read_length(buf: bytes, pos: int, first: int) -> tuple[int, int]:
    """A length (of bytes, a string or a map key) whose first byte `first` (at pos - 1) is
    not a one-byte length of 0..63; the length and the position after it.

    Raises:
        ValueError: a negative length, or beyond 64 bits.
        IndexError: the buffer ends inside it.
    """
    if first & 0x80:
        n, pos = read_varint(buf, pos, first)
    else:
        n = (first >> 1) ^ -(first & 1)
    if n < 0:
        raise ValueError("a negative length")
    return n, pos


@attrs.frozen
class Leaf:
    """One column of a reader's output: a field's value (`path`: the field names from
    the top record down), or whether a nullable nested record is present (`present`).

    `kind` is the Avro primitive type (`record` for a presence column), `schema` the
    field's type as the schema gives it (with its properties: `connect.parameters`,
    `logicalType`, ...), `nullable` whether it is a union with null, or inside a
    nullable record."""

    path: tuple[str, ...]
    kind: str
    schema: Any
    nullable: bool
    present: bool = False


@attrs.frozen
class RecordReader:
    """A generated reader of one record schema (`record_reader`)."""

    leaves: tuple[Leaf, ...]
    source: str
    _read: Callable[[bytes, Iterable[tuple[int, int]]], list[list[Any]]] = attrs.field(repr=False)

    def read(self, buf: bytes, bounds: Iterable[tuple[int, int]]) -> list[list[Any]]:
        """The records at `bounds` (start, end) of `buf`, each exactly one record, as
        one list per leaf: ints, floats, bools, bytes (strings raw), None for null.

        Raises:
            ValueError, IndexError, struct.error: a body that is not exactly one record,
                or one this reader does not vouch for (module docstring).
        """
        return self._read(buf, bounds)


class _Refused(Exception):
    """A schema this module does not read."""


def _logical_ok(kind: dict[str, Any]) -> bool:
    logical = kind.get("logicalType")
    if logical is None:
        return True
    # fastavro builds decimals from bytes with a precision; anything else it converts
    # in ways this reader does not mirror.
    return logical == "decimal" and kind.get("type") == "bytes" and "precision" in kind


class _Generator:
    def __init__(self) -> None:
        self.leaves: list[Leaf] = []
        self.lines: list[str] = []

    def leaf(self, leaf: Leaf) -> str:
        self.leaves.append(leaf)
        return f"a{len(self.leaves) - 1}"

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def long(self, depth: int, target: str, *, length: bool = False) -> None:
        """`target` = the next varint: `read_varint`'s loop written out here, which saves a
        call per value of more than one byte (commit ts, ids, lengths over 63); a value of
        one byte is looked up (`zigzag`). `length`: the value is a length, refused below 0
        (a one-byte length of 0..63 is an even byte: half of it)."""
        self.emit(depth, "b = buf[pos]; pos += 1")
        self.emit(depth, f"if b & {'0x81' if length else '0x80'}:")
        self.emit(depth + 1, "acc = b & 0x7F; shift = 7")
        self.emit(depth + 1, "while b & 0x80:")
        self.emit(depth + 2, "b = buf[pos]; pos += 1")
        self.emit(depth + 2, "acc |= (b & 0x7F) << shift")
        self.emit(depth + 2, "shift += 7")
        self.emit(depth + 1, "if acc >= _LIMIT: raise ValueError('a varint beyond 64 bits')")
        self.emit(depth + 1, f"{target} = (acc >> 1) ^ -(acc & 1)")
        if length:
            self.emit(depth + 1, f"if {target} < 0: raise ValueError('a negative length')")
        self.emit(depth, "else:")
        self.emit(depth + 1, f"{target} = b >> 1" if length else f"{target} = zigzag[b]")

    def value(self, depth: int, kind: str, append: str) -> None:
        """Read one value of primitive `kind` and append it."""
        if kind == "null":
            self.emit(depth, f"{append}(None)")
        elif kind == "boolean":
            self.emit(depth, "b = buf[pos]; pos += 1")
            self.emit(depth, "if b > 1: raise ValueError('a boolean byte other than 0 or 1')")
            self.emit(depth, f"{append}(b == 1)")
        elif kind in ("int", "long"):
            self.long(depth, "v")
            self.emit(depth, f"{append}(v)")
        elif kind == "float":
            self.emit(depth, f"{append}(_float(buf, pos)[0]); pos += 4")
        elif kind == "double":
            self.emit(depth, f"{append}(_double(buf, pos)[0]); pos += 8")
        else:  # bytes, string
            self.long(depth, "n", length=True)
            self.emit(depth, f"n += pos; {append}(buf[pos:n]); pos = n")

    def nulls(self, depth: int, start: int) -> None:
        """The null branch: None for the leaves from `start` on (False: not present)."""
        for index in range(start, len(self.leaves)):
            value = "False" if self.leaves[index].present else "None"
            self.emit(depth, f"a{index}({value})")

    def field(
        self, depth: int, path: tuple[str, ...], kind: Any, nullable: bool, union: bool = False
    ) -> None:
        """Read one field of type `kind`; `nullable`: inside a union with null or a
        nullable record; `union`: the value branch of a union with null."""
        if isinstance(kind, list):
            members = [m for m in kind if m != "null"]
            if len(kind) != 2 or len(members) != 1:
                raise _Refused("a union other than null and one type")
            null_byte, value_byte = (0, 2) if kind[0] == "null" else (2, 0)
            self.emit(depth, "b = buf[pos]; pos += 1")
            self.emit(depth, f"if b == {value_byte}:")
            start = len(self.leaves)
            self.field(depth + 1, path, members[0], True, union=True)
            self.emit(depth, f"elif b == {null_byte}:")
            self.nulls(depth + 1, start)
            self.emit(depth, "else:")
            self.emit(depth + 1, "raise ValueError('a union index out of range')")
            return
        name = kind.get("type") if isinstance(kind, dict) else kind
        if isinstance(kind, dict) and name == "record":
            if union:
                present = self.leaf(Leaf(path, "record", kind, False, present=True))
                self.emit(depth, f"{present}(True)")
            self.record(depth, path, kind, nullable)
            return
        if name not in _PRIMITIVES or (isinstance(kind, dict) and not _logical_ok(kind)):
            raise _Refused(f"type {name!r}")
        append = self.leaf(Leaf(path, name, kind, nullable))
        self.value(depth, name, append)

    def record(
        self, depth: int, path: tuple[str, ...], schema: dict[str, Any], nullable: bool
    ) -> None:
        fields = schema.get("fields")
        if not isinstance(fields, list):
            raise _Refused("a record without fields")
        for field in fields:
            if not isinstance(field, dict) or not isinstance(field.get("name"), str):
                raise _Refused("a field without a name")
            self.field(depth, (*path, field["name"]), field.get("type"), nullable)


def _namespace() -> dict[str, Any]:
    return {
        "_LIMIT": _LIMIT,
        "_ZIGZAG": _ZIGZAG,
        "_float": struct.Struct("<f").unpack_from,
        "_double": struct.Struct("<d").unpack_from,
    }


def record_reader(schema: Any) -> RecordReader | None:
    """The generated reader of a record schema (JSON, as parsed), or None when the schema
    has anything this module does not read (module docstring)."""
    if not isinstance(schema, dict) or schema.get("type") != "record":
        return None
    generator = _Generator()
    try:
        generator.record(2, (), schema, False)
    except _Refused:
        return None
    leaves = generator.leaves
    body = "\n".join(generator.lines)
    names = [f"a{i}" for i in range(len(leaves))]
    columns = [f"c{i}" for i in range(len(leaves))]
    setup = "".join(
        f"    {c} = []; {a} = {c}.append\n" for c, a in zip(columns, names, strict=True)
    )
    source = (
        "def read(buf, bounds):\n"
        "    zigzag = _ZIGZAG\n"
        f"{setup}"
        "    for pos, end in bounds:\n"
        f"{body}\n"
        "        if pos != end: raise ValueError('not exactly one record')\n"
        f"    return [{', '.join(columns)}]\n"
    )
    read = _COMPILED.get(source)
    if read is None:
        if len(_COMPILED) >= _COMPILED_KEPT:
            _COMPILED.clear()
        namespace = _namespace()
        exec(compile(source, "<avro record reader>", "exec"), namespace)  # noqa: S102 - our code
        read = _COMPILED[source] = namespace["read"]
    return RecordReader(tuple(leaves), source, read)

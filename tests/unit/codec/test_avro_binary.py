"""The generated Avro record readers (`codec.avro_binary`) give what fastavro gives: the same
values for bodies fastavro wrote, and, for any bytes they read at all, the values fastavro
reads from them (they may refuse more, never read otherwise); schemas they do not read
give no reader."""

from __future__ import annotations

import io
import math
from typing import Any

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.hypothesis_profiles import examples
from ticdc_sink.codec.avro_binary import record_reader

_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "boolean": st.booleans(),
    "int": st.integers(-(1 << 31), (1 << 31) - 1),
    "long": st.integers(-(1 << 63), (1 << 63) - 1),
    "float": st.floats(width=32, allow_nan=False),
    "double": st.floats(allow_nan=False),
    "bytes": st.binary(max_size=40),
    "string": st.text(max_size=20),
    "null": st.none(),
}


@st.composite
def fields(draw: Any, depth: int = 0) -> tuple[dict[str, Any], st.SearchStrategy[Any]]:
    """A field schema and the strategy of its values."""
    name = f"f{draw(st.integers(0, 10**6))}"
    if depth == 0 and draw(st.integers(0, 5)) == 0:  # a nullable nested record
        inner = draw(st.lists(fields(depth + 1), min_size=1, max_size=4, unique_by=_name))
        record = {"type": "record", "name": f"r{name}", "fields": [f for f, _ in inner]}
        values = st.fixed_dictionaries({f["name"]: v for f, v in inner})
        return {"name": name, "type": ["null", record]}, st.none() | values
    kind = draw(st.sampled_from(sorted(_VALUES)))
    schema: Any = {"type": kind, "connect.parameters": {"tidb_type": "X"}}
    values = _VALUES[kind]
    if kind != "null" and draw(st.booleans()):
        schema = ["null", schema] if draw(st.booleans()) else [schema, "null"]
        values = st.none() | values
    return {"name": name, "type": schema}, values


def _name(field: tuple[dict[str, Any], Any]) -> str:
    return str(field[0]["name"])


@st.composite
def records(draw: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    chosen = draw(st.lists(fields(), min_size=1, max_size=8, unique_by=_name))
    schema = {"type": "record", "name": "t", "fields": [f for f, _ in chosen]}
    values = st.fixed_dictionaries({f["name"]: v for f, v in chosen})
    return schema, draw(st.lists(values, min_size=1, max_size=5))


def _raw(value: Any) -> Any:
    """fastavro's value as the generated readers give it: strings as their bytes, a
    nested record flattened to its presence then its fields."""
    if isinstance(value, str):
        return [value.encode()]
    if isinstance(value, dict):
        return [True, *(v for item in value.values() for v in _raw(item))]
    return [value]


def _flat(schema: dict[str, Any], record: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for field in schema["fields"]:
        value = record[field["name"]]
        kind = field["type"]
        nested = isinstance(kind, list) and isinstance(kind[1], dict) and kind[1].get("fields")
        if nested and value is None:
            out += [False, *([None] * len(kind[1]["fields"]))]
        else:
            out += _raw(value)
    return out


def _fastavro(schema: dict[str, Any], body: bytes) -> dict[str, Any]:
    stream = io.BytesIO(body)
    record = fastavro.schemaless_reader(stream, fastavro.parse_schema(schema), None)
    if stream.tell() != len(body):
        raise ValueError("bytes left")
    assert isinstance(record, dict)
    return record


def _read(schema: dict[str, Any], bodies: list[bytes]) -> list[list[Any]]:
    reader = record_reader(schema)
    assert reader is not None
    bounds, end = [], 0
    for body in bodies:
        bounds.append((end, end + len(body)))
        end += len(body)
    columns = reader.read(b"".join(bodies), bounds)
    return [list(row) for row in zip(*columns, strict=True)]


@settings(max_examples=examples(200), deadline=None)
@given(case=records())
def test_a_reader_gives_what_fastavro_wrote(case: Any) -> None:
    schema, rows = case
    parsed = fastavro.parse_schema(schema)
    bodies = []
    for row in rows:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, row)
        bodies.append(out.getvalue())
    got = _read(schema, bodies)
    assert got == [_flat(schema, _fastavro(schema, body)) for body in bodies]


@settings(max_examples=examples(300), deadline=None)
@given(case=records(), data=st.data())
def test_bytes_a_reader_takes_read_as_fastavro_reads_them(case: Any, data: Any) -> None:
    schema, rows = case
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), rows[0])
    body = bytearray(out.getvalue())
    for _ in range(data.draw(st.integers(1, 3))):  # a byte changed, removed or added
        at = data.draw(st.integers(0, len(body)))
        how = data.draw(st.sampled_from(["set", "insert", "delete"]))
        if how == "insert" or not body:
            body.insert(at, data.draw(st.integers(0, 255)))
        elif how == "delete":
            del body[min(at, len(body) - 1)]
        else:
            body[min(at, len(body) - 1)] = data.draw(st.integers(0, 255))
    try:
        (got,) = _read(schema, [bytes(body)])
    except Exception:  # noqa: BLE001 - refused (ValueError, IndexError, struct.error)
        return
    # Strings come out as their bytes, valid UTF-8 or not (the column's cast to text
    # checks them): compare with fastavro reading them as bytes, the same encoding.
    assert _nan_equal(got) == _nan_equal(
        _flat(schema, _fastavro(_strings_as_bytes(schema), bytes(body)))
    )


def _nan_equal(values: list[Any]) -> list[Any]:
    """`values` with each NaN a marker that equals itself (a changed byte can make a
    float NaN, and NaN != NaN)."""
    return ["NaN" if isinstance(v, float) and math.isnan(v) else v for v in values]


def _strings_as_bytes(schema: Any) -> Any:
    """`schema` with every string type a bytes type (Avro encodes both alike)."""
    if schema == "string":
        return "bytes"
    if isinstance(schema, list):
        return [_strings_as_bytes(s) for s in schema]
    if isinstance(schema, dict):
        return {
            k: _strings_as_bytes(v) if k in ("type", "fields") else v for k, v in schema.items()
        }
    return schema


@pytest.mark.parametrize(
    "kind",
    [
        {"type": "map", "values": "long"},
        {"type": "array", "items": "long"},
        {"type": "enum", "name": "e", "symbols": ["a"]},
        {"type": "fixed", "name": "x", "size": 2},
        ["null", "long", "string"],
        ["long", "string"],
        {"type": "long", "logicalType": "timestamp-millis"},
        {"type": "string", "logicalType": "uuid"},
        {"type": "bytes", "logicalType": "decimal"},  # no precision
    ],
)
def test_a_schema_of_other_types_has_no_reader(kind: Any) -> None:
    schema = {"type": "record", "name": "t", "fields": [{"name": "a", "type": kind}]}
    assert record_reader(schema) is None


def test_a_decimal_is_read_as_its_bytes() -> None:
    kind = {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2}
    schema = {"type": "record", "name": "t", "fields": [{"name": "a", "type": kind}]}
    assert _read(schema, [b"\x04\x30\x39"]) == [[b"\x30\x39"]]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"\x04", "a union index beyond the union"),
        (b"\x02\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02", "a varint beyond 64 bits"),
        (b"\x02\x02\x00", "a byte after the record"),
        (b"\x02", "the record cut short"),
    ],
)
def test_a_body_the_reader_does_not_vouch_for_is_refused(body: bytes, why: str) -> None:
    schema = {"type": "record", "name": "t", "fields": [{"name": "a", "type": ["null", "long"]}]}
    with pytest.raises((ValueError, IndexError)):
        _read(schema, [body])


@pytest.mark.parametrize(
    ("body", "read"),
    [
        (b"\x00", b""),
        (b"\x06abc", b"abc"),
        (b"\x7e" + b"x" * 63, b"x" * 63),  # the longest one-byte length
        (b"\x80\x01" + b"y" * 64, b"y" * 64),  # the shortest of two bytes
        (b"\x01", None),  # -1 in one byte
        (b"\x81\x00", None),  # -1 in two
        (b"\x83\x00", None),  # -2
    ],
)
def test_a_length_is_read_or_refused_below_zero(body: bytes, read: bytes | None) -> None:
    schema = {"type": "record", "name": "t", "fields": [{"name": "a", "type": "bytes"}]}
    if read is None:
        with pytest.raises(ValueError, match="a negative length"):
            _read(schema, [body])
    else:
        assert _read(schema, [body]) == [[read]]


def test_schemas_read_alike_share_compiled_code_but_not_their_leaves() -> None:
    # A reader's code is compiled once per source; the leaves (with each field's own
    # properties, which type its column) stay the schema's.
    def schema(tidb_type: str) -> dict[str, Any]:
        kind = {"type": "long", "connect.parameters": {"tidb_type": tidb_type}}
        return {"type": "record", "name": "t", "fields": [{"name": "a", "type": kind}]}

    ints, bigints = record_reader(schema("INT")), record_reader(schema("BIGINT"))
    assert ints is not None and bigints is not None
    assert ints.source == bigints.source
    assert [leaf.schema["connect.parameters"] for leaf in bigints.leaves] == [
        {"tidb_type": "BIGINT"}
    ]
    assert bigints.read(b"\x04\x05", [(0, 1), (1, 2)]) == [[2, -3]]

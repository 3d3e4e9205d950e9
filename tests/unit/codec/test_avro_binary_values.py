"""The generated whole-value Avro readers (`codec.avro_binary.value_reader`) give what
fastavro's `schemaless_reader` gives: the same value for bodies fastavro wrote, and, for
any bytes they read at all, the value fastavro reads from them (they may refuse more,
never read otherwise); schemas they do not read give no reader."""

from __future__ import annotations

import io
import itertools
import json
import math
from typing import Any

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.hypothesis_profiles import examples
from ticdc_sink.codec.avro_binary import value_reader

_PRIMITIVE_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "null": st.none(),
    "boolean": st.booleans(),
    "int": st.integers(-(1 << 31), (1 << 31) - 1),
    "long": st.integers(-(1 << 63), (1 << 63) - 1),
    "float": st.floats(width=32, allow_nan=False),
    "double": st.floats(allow_nan=False),
    "bytes": st.binary(max_size=20),
    "string": st.text(max_size=12),
}


@st.composite
def types(draw: Any, depth: int = 0) -> tuple[Any, st.SearchStrategy[Any]]:
    """A type (each named type defined where it is used) and its values."""
    choices = ["primitive"] * 4 + (["record", "map", "union", "enum"] if depth < 3 else [])
    choice = draw(st.sampled_from(choices))
    if choice == "primitive":
        kind = draw(st.sampled_from(sorted(_PRIMITIVE_VALUES)))
        return kind, _PRIMITIVE_VALUES[kind]
    name = "n"  # named anew by _fresh
    if choice == "enum":
        symbols = draw(
            st.lists(
                st.from_regex(r"[A-Z]{1,4}", fullmatch=True), min_size=1, max_size=4, unique=True
            )
        )
        return {"type": "enum", "name": name, "symbols": symbols}, st.sampled_from(symbols)
    if choice == "map":
        inner, values = draw(types(depth + 1))
        return {"type": "map", "values": inner}, st.dictionaries(
            st.text(max_size=6), values, max_size=4
        )
    if choice == "union":
        # distinct branches that fastavro's writer tells apart by the value alone
        kinds = draw(
            st.lists(
                st.sampled_from(["null", "long", "string", "bytes", "boolean"]),
                min_size=1,
                max_size=4,
                unique=True,
            )
        )
        return kinds, st.one_of([_PRIMITIVE_VALUES[k] for k in kinds])
    fields = draw(st.lists(types(depth + 1), min_size=1, max_size=4))
    schema = {
        "type": "record",
        "name": name,
        "fields": [{"name": f"f{i}", "type": kind} for i, (kind, _) in enumerate(fields)],
    }
    values = st.fixed_dictionaries({f"f{i}": v for i, (_, v) in enumerate(fields)})
    return schema, values


def _written(schema: Any, value: Any) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), value)
    return out.getvalue()


def _fastavro(schema: Any, body: bytes) -> Any:
    stream = io.BytesIO(body)
    value = fastavro.schemaless_reader(stream, fastavro.parse_schema(schema), None)
    if stream.tell() != len(body):
        raise ValueError("bytes left")
    return value


def _nan_equal(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict):
        return {k: _nan_equal(v) for k, v in value.items()}
    return value


def _fresh(schema: Any) -> Any:
    """`schema` as JSON again (fastavro's parse marks the dicts it is given), each named
    type named anew in order (n0, n1, ...), so that no two share a name."""
    count = itertools.count()

    def rename(node: Any) -> Any:
        if isinstance(node, list):
            return [rename(n) for n in node]
        if not isinstance(node, dict):
            return node
        node = {k: rename(v) for k, v in node.items()}
        if "name" in node and node.get("type") in ("record", "enum"):
            node["name"] = f"n{next(count)}"
        return node

    return rename(json.loads(json.dumps(schema)))


@st.composite
def cases(draw: Any) -> tuple[Any, Any]:
    kind, values = draw(types())
    schema = {"type": "record", "name": "top", "fields": [{"name": "a", "type": kind}]}
    schema = _fresh(schema)
    return schema, draw(st.fixed_dictionaries({"a": values}))


@settings(max_examples=examples(200), deadline=None)
@given(case=cases())
def test_a_reader_gives_what_fastavro_wrote(case: Any) -> None:
    schema, value = case
    body = _written(_fresh(schema), value)
    read = value_reader(_fresh(schema))
    assert read is not None
    prefix = b"\x01\x02"  # a value is read where its bounds say, not from the start
    got = read(prefix + body, len(prefix), len(prefix) + len(body))
    assert got == _fastavro(_fresh(schema), body)


@settings(max_examples=examples(300), deadline=None)
@given(case=cases(), data=st.data())
def test_bytes_a_reader_takes_read_as_fastavro_reads_them(case: Any, data: Any) -> None:
    schema, value = case
    body = bytearray(_written(_fresh(schema), value))
    for _ in range(data.draw(st.integers(1, 3))):  # a byte changed, removed or added
        at = data.draw(st.integers(0, len(body)))
        how = data.draw(st.sampled_from(["set", "insert", "delete"]))
        if how == "insert" or not body:
            body.insert(at, data.draw(st.integers(0, 255)))
        elif how == "delete":
            del body[min(at, len(body) - 1)]
        else:
            body[min(at, len(body) - 1)] = data.draw(st.integers(0, 255))
    read = value_reader(_fresh(schema))
    assert read is not None
    try:
        got = read(bytes(body), 0, len(body))
    except Exception:  # noqa: BLE001 - refused (ValueError, IndexError, struct.error)
        return
    assert _nan_equal(got) == _nan_equal(_fastavro(_fresh(schema), bytes(body)))


@pytest.mark.parametrize(
    "kind",
    [
        {"type": "array", "items": "long"},
        {"type": "fixed", "name": "x", "size": 2},
        {"type": "long", "logicalType": "timestamp-millis"},
        {"type": "bytes", "logicalType": "decimal", "precision": 4},
        "unknown.Name",
        {"type": "record", "name": "r", "fields": [{"name": "self", "type": ["null", "r"]}]},
    ],
)
def test_a_schema_of_other_types_has_no_reader(kind: Any) -> None:
    schema = {"type": "record", "name": "t", "fields": [{"name": "a", "type": kind}]}
    assert value_reader(schema) is None


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"\x01", "a negative enum index"),
        (b"\x08", "an enum index beyond the symbols"),
    ],
)
def test_an_enum_index_the_reader_does_not_vouch_for_is_refused(body: bytes, why: str) -> None:
    read = value_reader({"type": "enum", "name": "e", "symbols": ["A", "B"]})
    assert read is not None
    with pytest.raises((ValueError, IndexError)):
        read(body, 0, len(body))


def test_a_map_block_written_with_its_size_is_refused() -> None:
    read = value_reader({"type": "map", "values": "long"})
    assert read is not None
    body = b"\x01\x06\x02a\x04\x00"  # one entry, 3 bytes: fastavro reads {"a": 2}
    assert _fastavro({"type": "map", "values": "long"}, body) == {"a": 2}
    with pytest.raises(ValueError, match="a map block with its size"):
        read(body, 0, len(body))

"""The hypothesis strategies shared by the unit tests (a test's own strategies stay in
its module):

    images(ids)                 one row of `batches.COLUMNS`, its id drawn from `ids`
    record_batches(with_table)  1-3 record batches of that table: INSERTs, UPDATEs with and
                                without `_before` (some changing the key), DELETEs, NULLs,
                                commit ts never decreasing; with `with_table`, rows of
                                tables t1 and t2 by `_table`
    all_types_rows(table)       a row (mounter values) of `schemas.ALL_TYPES_TABLE`, or of
                                a table of some of its columns
    all_types_tables(most)      `schemas.ALL_TYPES_TABLE`, or a table of its key `id` and
                                up to `most` of its other columns
    json_paths(document)        the path (keys and indexes) of every node of a JSON
                                document, the root's first: where the fuzz tests mutate
"""

from __future__ import annotations

from typing import Any

import attrs
import pyarrow as pa
from hypothesis import strategies as st

from tests.support.batches import ARROW_FIELDS, COLUMNS, COMMIT_TS
from tests.support.schemas import ALL_TYPES_TABLE
from ticdc_sink.schema import TableSchema

__all__ = [
    "ALL_TYPES_VALUES",
    "all_types_rows",
    "all_types_tables",
    "images",
    "json_paths",
    "record_batches",
]


@st.composite
def images(draw: Any, ids: Any) -> dict[str, Any]:
    image = {"id": draw(ids)}
    for name, spec in COLUMNS.items():
        image[name] = draw(st.none() | spec[3])
    return image


@st.composite
def record_batches(draw: Any, with_table: bool) -> list[pa.RecordBatch]:
    ids = st.integers(0, 6)
    batches = []
    ts = COMMIT_TS
    for _ in range(draw(st.integers(1, 3))):
        rows = draw(st.lists(images(ids), min_size=1, max_size=8))
        ops = draw(st.lists(st.sampled_from("cuud"), min_size=len(rows), max_size=len(rows)))
        befores = []
        for op in ops:
            before = draw(st.none() | images(ids)) if op == "u" else None
            befores.append(before)
        commit = []
        for _ in rows:
            ts += draw(st.integers(0, 2))
            commit.append(ts)
        columns: dict[str, Any] = {
            f.name: pa.array([r[f.name] for r in rows], f.type) for f in ARROW_FIELDS
        }
        columns["_op"] = pa.array(ops, pa.string())
        columns["_commit_ts"] = pa.array(commit, pa.int64())
        columns["_before"] = pa.array(befores, pa.struct(ARROW_FIELDS))
        if with_table:
            tables = draw(st.lists(st.sampled_from(["t1", "t2"]), min_size=len(rows)))
            columns["_table"] = pa.array(tables[: len(rows)], pa.string())
        batches.append(pa.RecordBatch.from_pydict(columns))
    return batches


_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)


def _decimal_text(precision: int, scale: int) -> st.SearchStrategy[str]:
    limit = 10**precision - 1

    def render(n: int) -> str:
        sign = "-" if n < 0 else ""
        digits = str(abs(n)).rjust(scale + 1, "0")
        return sign + (digits[:-scale] + "." + digits[-scale:] if scale else digits)

    return st.integers(-limit, limit).map(render)


ALL_TYPES_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "id": st.integers(-(2**31), 2**31 - 1),
    "ti": st.integers(-128, 127),
    "tiu": st.integers(0, 255),
    "si": st.integers(-(2**15), 2**15 - 1),
    "mi": st.integers(0, 2**24 - 1),
    "i": st.integers(-(2**31), 2**31 - 1),
    "iu": st.integers(0, 2**32 - 1),
    "bi": st.integers(-(2**63), 2**63 - 1),
    "biu": st.integers(0, 2**64 - 1),
    "f": st.floats(width=32, allow_nan=False, allow_infinity=False),
    "d": st.floats(allow_nan=False, allow_infinity=False),
    "dec": _decimal_text(30, 5),
    "dec0": _decimal_text(10, 0),
    "bit": st.integers(0, 2**64 - 1),
    "vc": _TEXT,
    "tx": _TEXT,
    "bn": st.binary(max_size=20),
    "bl": st.binary(max_size=20),
    "e": st.integers(1, 3),
    "s": st.integers(0, 15),
    "j": st.sampled_from(['{"a": 1}', "[1, 2]", "null", '"x"']),
    "dt": st.sampled_from(["2020-01-02", "0000-00-00", "9999-12-31"]),
    "dtm": st.sampled_from(["2020-01-02 03:04:05.120", "1000-01-01 00:00:00.000"]),
    "ts": st.sampled_from(["2020-01-02 03:04:05", "1970-01-01 00:00:01"]),
    "tm": st.sampled_from(["-838:59:59", "00:00:00", "12:34:56"]),
    "y": st.sampled_from([0, 1901, 2155]),
    "v": st.sampled_from(["[1,2,3]", "[0.5,-1,2e+10]"]),
}


def all_types_rows(table: TableSchema = ALL_TYPES_TABLE) -> st.SearchStrategy[tuple[Any, ...]]:
    parts = []
    for column in table.columns:
        values = ALL_TYPES_VALUES[column.name]
        parts.append(st.none() | values if column.nullable else values)
    return st.tuples(*parts)


def json_paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every node of the JSON document `node`, `prefix` (the root) first."""
    found = [prefix]
    if isinstance(node, dict):
        for key, child in node.items():
            found += json_paths(child, (*prefix, key))
    elif isinstance(node, list):
        for i, child in enumerate(node):
            found += json_paths(child, (*prefix, i))
    return found


@st.composite
def all_types_tables(draw: Any, most: int) -> TableSchema:
    """`ALL_TYPES_TABLE` or a table of some of its columns (always the key `id`)."""
    others = [c for c in ALL_TYPES_TABLE.columns if c.name != "id"]
    chosen = draw(st.lists(st.sampled_from(others), unique_by=lambda c: c.name, max_size=most))
    keep = {"id", *(c.name for c in (others if draw(st.booleans()) else chosen))}
    return attrs.evolve(
        ALL_TYPES_TABLE, columns=tuple(c for c in ALL_TYPES_TABLE.columns if c.name in keep)
    )

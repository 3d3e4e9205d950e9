"""Tools the column-wise encoders share (ticdc_sink/codec/batch.py)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from ticdc_sink.codec.batch import string_bytes

WORDS = pa.array(["alpha", None, "", "<b>", "omega"])


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string(), pa.binary()])
def test_string_bytes_are_the_arrays_own_values(kind: pa.DataType) -> None:
    words = WORDS.cast(kind)
    assert string_bytes(words) == b"alpha<b>omega"
    assert string_bytes(words.slice(3)) == b"<b>omega"
    assert string_bytes(words.slice(1, 2)) == b""
    assert string_bytes(words.slice(0, 0)) == b""


def test_a_slice_cast_to_large_string_does_not_show_its_parents_bytes() -> None:
    # The cast keeps the parent's data buffer and writes new offsets into it.
    part = WORDS.slice(3, 1).cast(pa.large_string())
    assert part.buffers()[2].to_pybytes() == b"alpha<b>omega"
    assert string_bytes(part) == b"<b>"


def test_a_computed_array_is_all_its_buffer() -> None:
    assert string_bytes(pc.cast(pa.array([1.5, None, 2e30]), pa.large_string())) == b"1.52e+30"

"""A writer schema as the avro decoder reads it (`WriterSchema`), and how a field's value
is typed back (`Converter`): what the row path (`decoder.py`) and the column-wise read
(`read_columns.py`) share. The decoder offers the column-wise read
(`AvroDecoder.record_run`) and hands it its writer schemas by id; `read_columns` never
imports the decoder.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from ticdc_sink.schema import MySQLType

__all__ = ["Converter", "WriterSchema"]

Converter = Callable[[Any], Any]


@attrs.frozen
class WriterSchema:
    """A writer schema as `AvroDecoder` reads it, for a column-wise reader of the same
    records (`read_columns`): its JSON, the table its record names, and each column
    (field before the extension fields) with the converter that types its value and its
    closest MySQL type (None: a field without `tidb_type`)."""

    schema_id: int
    schema: Any
    database: str
    table: str
    columns: tuple[tuple[str, Converter], ...]
    types: tuple[MySQLType | None, ...]

"""What a stream's driver needs of a row message, read without decoding its values
(`RowPeek`): the op, table, commit ts and schema version, and whether the values would be
typed.

A streaming read's driver places watermark cuts and watches for schema changes
(`read.stream`); the rows' values are the tasks' to decode (typing them costs 40 to 80 µs
a message). A peek answers only when it is certain, else it gives None and the caller
decodes the message as usual: a watermark, DDL or BOOTSTRAP message, a claim-check,
handle-key-only or checksummed row, any field of an unexpected type.

Each protocol's peek lives in its decoder module (`codec/<protocol>/decoder.py`):

- Simple JSON, canal-json: the message is parsed (orjson, as the decoder parses it, so
  the same fields win) and the envelope checked as the decoder checks it; no value is
  typed.
- Simple Avro: the DML record read by the reader a task's column-wise read uses
  (`codec/simple/avro_dml.py`: the envelope checked as it is read, the images as
  fastavro reads them); no value is typed.
- debezium: the message matches, from its first byte, the compact form TiCDC's encoder
  writes (the payload's fields in their order, every string a valid JSON string token,
  the images' values scalars), read by a regular expression over its structure, never by
  searching for text among the values; the schema part that follows, the larger part of
  the message and the same text for every row of a table, is parsed once per text.

What a peek does not check, the tasks' decode does: a value its column's type refuses,
bytes inside a debezium value that are not UTF-8. The decoders offer their protocol's
peek as `peek_row`, with their options applied (compression, the schemas a Simple
decoder knows).
"""

from __future__ import annotations

from typing import Any

import attrs

from ticdc_sink.events import Op

__all__ = ["ROW_OPS", "Images", "RowPeek"]

#: A row's new and old images as the message holds them (`RowPeek.images`).
Images = tuple[dict[str, Any] | None, dict[str, Any] | None]


@attrs.frozen
class RowPeek:
    """A row message as a peek read it: the facts of `DecodedRow` that need no value
    decoded. `typed` is whether the decoder would type the values (a Simple row of a
    schema version it knows; a debezium row with its `schema` part). `images`, where the
    decoder compares the values as the message holds them (Simple), are `data` and `old`
    so, for the replay rule's identical-row check (`read.replay`); else None."""

    op: Op
    commit_ts: int
    database: str
    table: str
    schema_version: int = 0
    typed: bool = True
    images: Images | None = attrs.field(default=None, eq=False, repr=False)


#: A row message's type, as Simple and canal-json spell it, to its `Op`.
ROW_OPS = {"INSERT": Op.INSERT, "UPDATE": Op.UPDATE, "DELETE": Op.DELETE}

"""TiCDC's canal-json protocol (`protocol=canal-json`, reference §9): DML messages,
WATERMARK and DDL, as tiflow's `pkg/sink/codec/canal` writes them.

    canal_json/
      values.py     value text, mysqlType and sqlType, layouts, easyjson over orjson (shared)
      table.py      CanalJsonTable: one table's constant text, compiled once (shared)
      row.py        CanalJsonRowEncoder: one change, one message
      batch.py      CanalJsonBatchEncoder: the same messages, column-wise
      encoder.py    CanalJsonEncoder (size check, large messages, DDL) and the watermark
      parsers.py    value text back into values, by mysqlType / sqlType (shared)
      decoder.py    CanalJsonDecoder: messages back into events, the peek
      read_columns.py  CanalJsonRun: a read's runs of rows -> Arrow, column by column
      spec.py       SPEC: the protocol's traits, the entry `PROTOCOLS` names

The row and column-wise modules import the shared ones and never each other; `encoder.py`
alone imports both paths. The package re-exports the public names below.
"""

from __future__ import annotations

from ticdc_sink.codec.canal_json.encoder import CanalJsonEncoder, encode_watermark
from ticdc_sink.codec.canal_json.values import (
    WATERMARK_TYPE,
    full_mysql_type,
    java_sql_type,
    mysql_type,
)

__all__ = [
    "WATERMARK_TYPE",
    "CanalJsonEncoder",
    "encode_watermark",
    "full_mysql_type",
    "java_sql_type",
    "mysql_type",
]

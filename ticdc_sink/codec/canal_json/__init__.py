"""TiCDC's canal-json protocol (`protocol=canal-json`, reference §9): DML messages,
WATERMARK and DDL, as tiflow's `pkg/sink/codec/canal` writes them.

    canal_json/
      values.py     value text, mysqlType and sqlType, layouts, easyjson over orjson (shared)
      table.py      CanalJsonTable: one table's constant text, compiled once (shared)
      row.py        CanalJsonRowEncoder: one change, one message
      batch.py      CanalJsonBatchEncoder: the same messages, column-wise
      encoder.py    CanalJsonEncoder (size check, large messages, DDL) and the watermark
      decoder.py    CanalJsonDecoder: messages back into events, the peek
      spec.py       SPEC: the protocol's traits, the entry `PROTOCOLS` names

The row and column-wise modules import the shared ones and never each other; `encoder.py`
alone imports both paths. The names below load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ticdc_sink.codec import lazy_names

if TYPE_CHECKING:
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

# Hidden from a type checker, which reads the names from the imports above instead.
if not TYPE_CHECKING:
    __getattr__ = lazy_names(
        __name__,
        {
            "WATERMARK_TYPE": "values",
            "CanalJsonEncoder": "encoder",
            "encode_watermark": "encoder",
            "full_mysql_type": "values",
            "java_sql_type": "values",
            "mysql_type": "values",
        },
    )

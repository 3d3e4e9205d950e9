"""What the large-message tests share: a table with a wide text column, a row above
1000 bytes (`BIG`) and one below (`SMALL`), the simple codec options with a 1000-byte
limit (`simple_config`), and `MemoryStore`, a claim-check store in memory.

    WIDE             d.wide (id int primary key, payload text)
    BIG, SMALL       INSERTs of WIDE, above and below 1000 bytes
    CLAIM            LargeMessageHandleOption.CLAIM_CHECK
    simple_config()  simple's CodecConfig, max-message-bytes 1000, the policy given
    MemoryStore      a ClaimCheckStore whose files stay in a dict (`load` reads them back)
"""

from __future__ import annotations

from typing import Any

from ticdc_sink.config import CodecConfig, LargeMessageHandleOption
from ticdc_sink.ddl import parse_mysql_type
from ticdc_sink.events import Op, RowChange
from ticdc_sink.schema import Column, Index, TableSchema

__all__ = ["BIG", "CLAIM", "SMALL", "WIDE", "MemoryStore", "simple_config"]

CLAIM = LargeMessageHandleOption.CLAIM_CHECK


def _col(name: str, type_text: str, column_id: int, **kwargs: Any) -> Column:
    return Column(name, parse_mysql_type(type_text), column_id=column_id, **kwargs)


WIDE = TableSchema(
    "d",
    "wide",
    (_col("id", "int", 1, nullable=False), _col("payload", "text", 2)),
    (Index("PRIMARY", ("id",), unique=True, primary=True),),
    table_id=5,
    version=6,
)
BIG = RowChange(WIDE, Op.INSERT, 3 << 18, (7, "x" * 2000))
SMALL = RowChange(WIDE, Op.INSERT, 3 << 18, (8, "y"))


class MemoryStore:
    """A ClaimCheckStore in memory."""

    def __init__(self, base: str = "file:///cc") -> None:
        self.base = base
        self.files: dict[str, bytes] = {}

    def location(self, name: str) -> str:
        return f"{self.base}/{name}"

    def write(self, name: str, data: bytes) -> None:
        self.files[name] = data

    def load(self, location: str) -> bytes:
        return self.files[location.rsplit("/", 1)[1]]


def simple_config(option: LargeMessageHandleOption, **kwargs: Any) -> CodecConfig:
    if option is CLAIM:
        kwargs.setdefault("claim_check_storage_uri", "file:///cc")
    return CodecConfig(max_message_bytes=1000, large_message_handle_option=option, **kwargs)

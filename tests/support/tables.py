"""Tables the integration tests write through every protocol: a table with every MySQL
type of the reference (values at the edges of their ranges, then a row of NULLs), and a
change stream of inserts, updates (one changing the primary key) and deletes together with
the final table it leaves behind."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

from ticdc_sink import tso

__all__ = [
    "ALL_TYPES",
    "CHANGES",
    "CHANGES_SCHEMA",
    "EXPECTED",
    "SPARK_TYPES",
    "all_types_frame",
    "all_types_options",
    "apply_changes",
    "final_table",
]

# column -> (MySQL type, the value given to Spark)
ALL_TYPES = {
    "c_tinyint": ("tinyint", -128),
    "c_tinyint_u": ("tinyint unsigned", 255),
    "c_smallint": ("smallint", -32768),
    "c_mediumint": ("mediumint", 8388607),
    "c_int": ("int", -2147483648),
    "c_int_u": ("int unsigned", 4294967295),
    "c_bigint": ("bigint", -9223372036854775808),
    "c_bigint_u": ("bigint unsigned", Decimal("18446744073709551615")),
    "c_float": ("float", 3.14),
    "c_double": ("double", 2.718281828459045),
    "c_decimal": ("decimal(12,4)", Decimal("-12345678.1250")),
    "c_char": ("char(5)", "ab"),
    "c_varchar": ("varchar(20)", "héllo <&> \u2028"),
    "c_text": ("text", 'line1\nline2\t"q"'),
    "c_binary": ("binary(4)", b"\x01\x02"),
    "c_varbinary": ("varbinary(10)", b"\x00\xff"),
    "c_blob": ("blob", b"blob bytes"),
    "c_date": ("date", dt.date(2024, 2, 29)),
    "c_datetime": ("datetime(3)", dt.datetime(2024, 2, 29, 23, 59, 58, 123000)),
    "c_timestamp": ("timestamp(6)", dt.datetime(2024, 3, 1, 1, 2, 3, 456789, dt.UTC)),
    "c_time": ("time", "-838:59:59"),
    "c_year": ("year", 2155),
    "c_bit": ("bit(5)", 21),
    "c_enum": ("enum('small','medium','large')", "medium"),
    "c_set": ("set('a','b','c')", "a,c"),
    "c_json": ("json", '{"b": [1, 2.5, "x"], "a": null}'),
}
SPARK_TYPES = {
    "c_bigint_u": "decimal(20,0)",
    "c_float": "float",
    "c_double": "double",
    "c_decimal": "decimal(12,4)",
    "c_binary": "binary",
    "c_varbinary": "binary",
    "c_blob": "binary",
    "c_date": "date",
    "c_datetime": "timestamp_ntz",
    "c_timestamp": "timestamp",
    "c_year": "int",
    "c_bit": "bigint",
    "c_tinyint": "int",
    "c_tinyint_u": "int",
    "c_smallint": "int",
    "c_mediumint": "int",
    "c_int": "int",
    "c_int_u": "bigint",
    "c_bigint": "bigint",
}
EXPECTED = {
    "c_bigint_u": 18446744073709551615,
    "c_float": 3.140000104904175,
    "c_decimal": Decimal("-12345678.1250"),
    "c_char": "ab",
    "c_binary": b"\x01\x02\x00\x00",
    "c_date": "2024-02-29",
    "c_datetime": "2024-02-29 23:59:58.123",
    "c_timestamp": "2024-03-01 09:02:03.456789",
    "c_enum": 2,
    "c_set": 5,
    "c_json": '{"a": null, "b": [1, 2.5, "x"]}',
}


def all_types_frame(spark: Any) -> Any:
    """One DataFrame partition: row id 1 with every value above, row id 2 all NULL."""
    ddl = ", ".join(f"{n} {SPARK_TYPES.get(n, 'string')}" for n in ALL_TYPES)
    row = [1, *(value for _, value in ALL_TYPES.values())]
    null_row = [2, *([None] * len(ALL_TYPES))]
    return spark.createDataFrame([row, null_row], f"id bigint, {ddl}").coalesce(1)


def all_types_options() -> dict[str, str]:
    """Options that give the all-types frame its MySQL types (TIMESTAMP in Asia/Shanghai)."""
    return {
        "database": "types",
        "table": "all",
        "primary-key": "id",
        "partition-num": "1",
        "time-zone": "Asia/Shanghai",
        "column-types": json.dumps({name: mysql for name, (mysql, _) in ALL_TYPES.items()}),
    }


# A change stream on (id bigint primary key, name string, amount decimal(10,2)): inserts,
# updates with their before image (one moves id 3 to 30, which TiCDC's Kafka sink splits
# into a DELETE and an INSERT), and deletes, each key's changes in commit ts order.
CHANGES_SCHEMA = (
    "_op string, _commit_ts bigint, id bigint, name string, amount decimal(10,2), "
    "_before struct<id: bigint, name: string, amount: decimal(10,2)>"
)
_T0 = 1_750_000_000_000


def _changes() -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    state: dict[int, tuple[str, Decimal]] = {}
    step = 0

    def emit(op: str, key: int, name: str | None, amount: Decimal | None, before: Any) -> None:
        nonlocal step
        step += 1
        rows.append((op, tso.compose(_T0 + step), key, name, amount, before))

    for key in range(1, 13):
        state[key] = (f"n{key}", Decimal(f"{key}.50"))
        emit("c", key, *state[key], None)
    for key in (2, 5, 7, 9):
        old = (key, *state[key])
        state[key] = (f"n{key}-v2", state[key][1] * 2)
        emit("u", key, *state[key], old)
    old = (3, *state.pop(3))
    state[30] = (old[1], old[2])
    emit("u", 30, *state[30], old)
    for key in (4, 9):
        emit("d", key, *state.pop(key), None)
    old = (5, *state[5])
    state[5] = ("n5-v3", Decimal("-0.01"))
    emit("u", 5, *state[5], old)
    return rows


CHANGES = _changes()


def apply_changes(rows: list[tuple[Any, ...]]) -> dict[int, dict[str, Any]]:
    """The table `rows` (in the CHANGES_SCHEMA shape) leave behind, applied directly."""
    table: dict[int, dict[str, Any]] = {}
    for op, _ts, key, name, amount, before in rows:
        if op == "d":
            del table[key]
            continue
        if before is not None and before[0] != key:
            del table[before[0]]
        table[key] = {"id": key, "name": name, "amount": amount}
    return table


def final_table(events: list[Any]) -> dict[int, dict[str, Any]]:
    """Decoded row events (in order per key) applied to an empty table."""
    from ticdc_sink.events import Op

    table: dict[int, dict[str, Any]] = {}
    for event in events:
        if event.op is Op.DELETE:
            del table[event.old["id"]]
        else:
            if event.old is not None and event.old["id"] != event.data["id"]:
                del table[event.old["id"]]
            table[event.data["id"]] = dict(event.data)
    return table

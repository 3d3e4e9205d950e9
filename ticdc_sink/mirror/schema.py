"""The mirror's schema rule: a table that gains columns evolves the target; any other
change of the columns (a column dropped, retyped, or a key column that is not the
target's) stops the mirror with an error naming the table, the column and the change.

Columns match by name in any case, as Spark matches them. Nullability and field metadata
(the reader's `mysql_type`) are not compared: Iceberg keeps no field metadata, and a
nullable column may hold what a NOT NULL one held.

Pure logic over `pyspark.sql.types`: no session, no table format.
"""

from __future__ import annotations

from pyspark.sql.types import StructField, StructType

from ticdc_sink.errors import SchemaError

__all__ = ["added_columns"]


def added_columns(
    target_name: str, source_name: str, target: StructType, incoming: StructType
) -> list[StructField]:
    """The columns `incoming` (the change stream's table columns) adds to `target` (the
    mirror table's), in the stream's order.

    Raises:
        SchemaError: a column of `target` is missing from `incoming` or has another type;
            the message names both tables, the column and the change.
    """
    have = {f.name.lower(): f for f in incoming.fields}
    for field in target.fields:
        new = have.get(field.name.lower())
        if new is None:
            change = "dropped"
        elif new.dataType != field.dataType:
            change = (
                f"changed from {field.dataType.simpleString()} to {new.dataType.simpleString()}"
            )
        else:
            continue
        raise SchemaError(
            f"mirror of {source_name} into {target_name}: column {field.name} {change}; the "
            "mirror only adds columns. Change the target table to match (or mirror into a "
            "new one) and restart the query",
            column=field.name,
        )
    known = {f.name.lower() for f in target.fields}
    return [f for f in incoming.fields if f.name.lower() not in known]

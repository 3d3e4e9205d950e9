"""open-protocol, the row path (tiflow `open/open_protocol_message.go`, `rowChangeToMsg`):
one change, one event's key and value JSON; the reference the column-wise path (`batch`)
matches byte for byte.

INSERT: `{"u":{…}}`; UPDATE: `{"u":{…},"p":{…}}` (`p`, the old row, unless
`open-output-old-value=false`; with `only-output-updated-columns` it keeps only the columns
whose value changed, tiflow `dropNotUpdatedColumns`, and is left out when none did);
DELETE: `{"d":{…}}`, the handle-key columns only with
`delete-only-output-handle-key-columns` or when the message was too large.
"""

from __future__ import annotations

from typing import Any

from ticdc_sink.codec.common import short_repr
from ticdc_sink.codec.open_protocol.message import row_key
from ticdc_sink.codec.open_protocol.table import OpenProtocolTable, image_map
from ticdc_sink.codec.open_protocol.values import ColumnEntry, same_text
from ticdc_sink.errors import InputError
from ticdc_sink.events import Op, RowChange

__all__ = ["OpenProtocolRowEncoder"]

_RENDER_ERRORS = (TypeError, ValueError, OverflowError, AttributeError)


class OpenProtocolRowEncoder:
    """The row events of one table, one change at a time."""

    def __init__(self, table: OpenProtocolTable) -> None:
        self._table = table
        self._name = table.name
        self._width = len(table.table.columns)

    def marshal(
        self, change: RowChange, *, key_only: bool = False, claim_check_location: str = ""
    ) -> tuple[bytes, bytes]:
        """The key and value JSON of one change; `key_only` is tiflow's
        `largeMessageOnlyHandleKeyColumns` (`ohk` in the key, unless a
        `claim_check_location` takes its place).

        Raises:
            InputError: a value that does not fit its column, a row of the wrong width, or
                an UPDATE without its old row while the old values are written.
            SchemaError: `key_only` on a table without a handle key.
        """
        t = self._table
        if key_only and not t.key_entries:
            raise t.no_handle_key("a message above max-message-bytes")
        entries = t.key_entries if key_only else t.entries
        op = change.op
        if op is Op.DELETE:
            delete_entries = t.key_entries if t.delete_key_only else entries
            value = '{"d":' + self._map(change.before, "before", delete_entries) + "}"
        elif op is Op.INSERT:
            value = '{"u":' + self._map(change.row, "row", entries) + "}"
        else:
            new = self._texts(change.row, "row", entries)
            value = '{"u":' + image_map(entries, new)
            if t.output_old_value:
                if change.before is None:
                    raise InputError(
                        f"an UPDATE of {self._name} has no old row; open-protocol writes the "
                        "old values in `p`: give the `_before` column, set "
                        "open-output-old-value=false, or send DELETE + INSERT",
                        table=self._name,
                    )
                old = self._texts(change.before, "before", entries)
                kept = entries
                if t.only_updated:
                    pairs = [
                        (e, o)
                        for e, o, n in zip(entries, old, new, strict=True)
                        if not same_text(e, o, n)
                    ]
                    kept, old = [p[0] for p in pairs], [p[1] for p in pairs]
                if kept:  # omitempty
                    value += ',"p":' + image_map(kept, old)
            value += "}"
        key = row_key(
            change.commit_ts,
            t.table.database,
            t.table.table,
            only_handle_key=key_only and not claim_check_location,
            claim_check_location=claim_check_location,
        )
        return key, value.encode()

    def _map(self, image: tuple[Any, ...] | None, what: str, entries: list[ColumnEntry]) -> str:
        return image_map(entries, self._texts(image, what, entries))

    def _texts(
        self, image: tuple[Any, ...] | None, what: str, entries: list[ColumnEntry]
    ) -> list[str | None]:
        if image is None or len(image) != self._width:
            got = "no values" if image is None else f"{len(image)} values"
            raise InputError(
                f"a row change of {self._name} has {got} in its {what} image; the table "
                f"has {self._width} columns",
                table=self._name,
            )
        texts: list[str | None] = []
        for entry in entries:
            value = image[entry.position]
            try:
                texts.append(None if value is None else entry.render(value))
            except _RENDER_ERRORS as exc:
                column = self._table.table.columns[entry.position]
                raise InputError(
                    f"column {column.name} of {self._name} ({column.type.base}) cannot "
                    f"take {short_repr(value)}: {exc}",
                    table=self._name,
                    column=column.name,
                    value=value,
                ) from exc
        return texts

"""canal-json, the row path (tiflow `canal/canal_json_row_event_encoder.go`
`newJSONMessageForDML`, hand-written with easyjson's `jwriter`): one change, one message;
the reference the column-wise path (`batch`) matches byte for byte.

A DML value is, in this order (`old` before `data`, unlike the docs' examples):

    {"id":0,"database":…,"table":…,"pkNames":[…],"isDdl":false,"type":"INSERT",
     "es":<commitTs >> 18>,"ts":<build ts ms>,"sql":"","sqlType":{…},"mysqlType":{…},
     "old":…,"data":[{…}][,"_tidb":{"commitTs":…[,"onlyHandleKey":true][,"rowkey":…]}]}

`rowkey` (pingcap/ticdc's `output-row-key`, with the TiDB extension): the record key of
the row in `data` (`codec.row_key`), base64.

Per row, the renderers turn the values into text, orjson writes each image in one call,
and a byte pass (usually one translate and one memchr) patches the few places where
orjson escapes differently from easyjson; `gotext.easyjson_quote` is the slow,
character-by-character path for invalid UTF-8.
"""

from __future__ import annotations

import base64
from typing import Any

from ticdc_sink.codec.canal_json.table import CanalJsonTable
from ticdc_sink.codec.canal_json.values import Entry, image_json
from ticdc_sink.codec.common import short_repr
from ticdc_sink.codec.row_key import row_key
from ticdc_sink.errors import InputError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.gotext import easyjson_quote

__all__ = ["CanalJsonRowEncoder"]


class CanalJsonRowEncoder:
    """The DML messages of one table, one change at a time."""

    def __init__(self, table: CanalJsonTable) -> None:
        self.table = table.table
        self._name = table.name
        self._layouts = table.layouts
        self._mysql_types = table.mysql_types
        self._heads = table.heads
        self._middle = table.middle
        self._only_updated = table.only_updated
        self._delete_key_only = table.delete_key_only
        self._extension = table.extension
        self._row_key_handle = table.row_key_handle

    def marshal(
        self, change: RowChange, *, too_large: bool, claim_check_location: str = ""
    ) -> bytes:
        """tiflow newJSONMessageForDML; `too_large` is its `messageTooLarge`, and a
        `claim_check_location` replaces the `onlyHandleKey` marker."""
        op = change.op
        only_key = too_large or (op is Op.DELETE and self._delete_key_only)
        layout = self._layouts[only_key]
        if op is Op.DELETE:
            image = self._image(change.before, "before")
            old = b"null"
            data = self._render(image, layout.entries)
        elif op is Op.INSERT:
            image = self._image(change.row, "row")
            old = b"null"
            data = self._render(image, layout.entries)
        else:
            image = self._image(change.row, "row")
            before = change.before
            if before is None:
                raise InputError(
                    f"an UPDATE of {self._name} has no old row; canal-json writes the old "
                    "values in `old`: give the `_before` column (or send DELETE + INSERT)",
                    table=self._name,
                )
            before = self._image(before, "before")
            if self._only_updated:
                old = self._render_changed(before, image, layout.entries)
            else:
                old = self._render(before, layout.entries)
            data = self._render(image, layout.entries)
        commit_ts = change.commit_ts
        if self._extension:
            if claim_check_location:
                marker = b',"claimCheckLocation":' + easyjson_quote(claim_check_location).encode()
            else:
                marker = b',"onlyHandleKey":true' if too_large else b""
            if self._row_key_handle is not None:
                marker += b',"rowkey":"%b"' % self._row_key(image)
            tail = b',"_tidb":{"commitTs":%d%b}}' % (commit_ts, marker)
        else:
            tail = b"}"
        return b"".join(
            (
                self._heads[op],
                b"%d" % (commit_ts >> 18),
                self._middle,
                layout.sql_type_for(image),
                self._mysql_types[only_key],
                old,
                b',"data":',
                data,
                tail,
            )
        )

    def _row_key(self, image: tuple[Any, ...]) -> bytes:
        """The base64 record key of the row `image` (its integer handle)."""
        assert self._row_key_handle is not None
        handle = image[self._row_key_handle]
        try:
            return base64.b64encode(row_key(self.table.table_id, handle))
        except (TypeError, OverflowError) as exc:
            column = self.table.columns[self._row_key_handle]
            raise InputError(
                f"column {column.name} of {self._name} is the row handle of "
                f"output-row-key and cannot take {short_repr(handle)}: an integer of 64 bits",
                table=self._name,
                column=column.name,
                value=handle,
            ) from exc

    def _image(self, image: tuple[Any, ...] | None, what: str) -> tuple[Any, ...]:
        width = len(self.table.columns)
        if image is None or len(image) != width:
            got = "no values" if image is None else f"{len(image)} values"
            raise InputError(
                f"a row change of {self._name} has {got} in its {what} image; the table "
                f"has {width} columns",
                table=self._name,
            )
        return image

    def _render(self, image: tuple[Any, ...], entries: list[Entry]) -> bytes:
        try:
            values = {
                name: None if (v := image[i]) is None else render(v) for name, i, render in entries
            }
        except (TypeError, ValueError, OverflowError, AttributeError):
            error = self._value_error(image)
            raise error from error.__cause__
        return image_json(values)

    def _render_changed(
        self, before: tuple[Any, ...], after: tuple[Any, ...], entries: list[Entry]
    ) -> bytes:
        # tiflow shouldIgnoreColumn / codec.IsColumnValueEqual: an old value equal to the new
        # one is left out. Values are compared by their rendered text, which is equal exactly
        # when the Go values are (float32 included), except -0 vs 0 (kept here; Go drops it).
        values: dict[str, str | None] = {}
        try:
            for name, i, render in entries:
                old = before[i]
                old_text = None if old is None else render(old)
                new = after[i]
                if old_text != (None if new is None else render(new)):
                    values[name] = old_text
        except (TypeError, ValueError, OverflowError, AttributeError):
            error = self._value_error(after, before)
            raise error from error.__cause__
        return image_json(values)

    def _value_error(self, *images: tuple[Any, ...]) -> InputError:
        """The error naming the first value a renderer refuses (looked for only after a
        render failed, so the fast path stays free of per-value error handling)."""
        for image in images:
            for _, i, render in self._layouts[False].entries:
                value = image[i]
                try:
                    if value is not None:
                        render(value)
                except (TypeError, ValueError, OverflowError, AttributeError) as exc:
                    column = self.table.columns[i]
                    error = InputError(
                        f"column {column.name} of {self._name} ({column.type.base}) cannot "
                        f"take {short_repr(value)}: {exc}",
                        table=self._name,
                        column=column.name,
                        value=value,
                    )
                    error.__cause__ = exc
                    return error
        return InputError(f"a row of {self._name} cannot be encoded", table=self._name)

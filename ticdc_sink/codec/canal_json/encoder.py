"""TiCDC's canal-json protocol (reference §9): DML messages, WATERMARK and DDL.

Bytes follow tiflow `pkg/sink/codec/canal/canal_json_row_event_encoder.go`
(`newJSONMessageForDML`, hand-written with easyjson's `jwriter`), `canal_entry.go`
(`formatValue`, `getJavaSQLType`), `canal_json_message.go` (the WATERMARK / DDL struct,
marshalled with goccy/go-json), `internal/java.go` (Java SQL type codes) and
`utils/mysql_types.go` (`GetMySQLType`). `CanalJsonEncoder` compiles a table once
(`table`) and offers the row path (`row`) and the column-wise path (`batch`): this is the
only module that imports both.

`ts` is TiCDC's `time.Now()`; here it is `build_ts_ms`, given by the caller, so that a
replayed batch writes byte-identical messages (the WATERMARK and DDL `ts` likewise).

DDL messages (`encode_ddl`, tiflow `newJSONMessageForDDL`): CREATE for a new table, ALTER
for a changed one; TiCDC sends them to partition 0 only (reference §4).

Large messages (key + value + 36 above `max-message-bytes`): `none` raises
MessageTooLargeError; `handle-key-only` re-encodes with the handle-key columns and
`"_tidb":{…,"onlyHandleKey":true}` (config validation ensures the TiDB extension is on);
`claim-check` writes the full message to the injected store (`codec.claim_check`), then
sends the handle-key columns with `"_tidb":{…,"claimCheckLocation":"…"}` and no
`onlyHandleKey` (tiflow `newClaimCheckLocationMessage`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ticdc_sink.codec import ClaimCheckStore, EncodedBatch, Message, SchemaRegistry
from ticdc_sink.codec.canal_json.batch import CanalJsonBatchEncoder
from ticdc_sink.codec.canal_json.row import CanalJsonRowEncoder
from ticdc_sink.codec.canal_json.table import CanalJsonTable
from ticdc_sink.codec.canal_json.values import WATERMARK_TYPE
from ticdc_sink.codec.compression import compress, compress_batch
from ticdc_sink.codec.large_message import LargeMessagePolicy
from ticdc_sink.events import ChangeBatch, RowChange
from ticdc_sink.gotext import easyjson_quote
from ticdc_sink.schema import TableSchema

if TYPE_CHECKING:
    from ticdc_sink.codec.config import CodecConfig

__all__ = ["CanalJsonEncoder", "build_encoder", "encode_table_ddl", "encode_watermark"]


class CanalJsonEncoder:
    """The canal-json encoder of one table, built once and reused for every row."""

    def __init__(
        self,
        config: CodecConfig,
        table: TableSchema,
        *,
        build_ts_ms: int,
        claim_check: ClaimCheckStore | None = None,
    ) -> None:
        """Compile the table; every message carries `build_ts_ms` as `ts`. `claim_check`
        stores the messages `large-message-handle-option=claim-check` diverts.

        Raises:
            SchemaError: a column type the protocol cannot carry.
        """
        self.config = config
        self.table = table
        self.build_ts_ms = build_ts_ms
        self._table = CanalJsonTable(config, table, build_ts_ms=build_ts_ms)
        self._row = CanalJsonRowEncoder(self._table)
        self._large = LargeMessagePolicy(
            config, table, self._small, store=claim_check, protocol="canal-json"
        )
        self._batch: CanalJsonBatchEncoder | None = None

    def encode_row(self, change: RowChange) -> Message:
        """The DML message of one row change; the Kafka key is empty.

        Raises:
            InputError: a value that does not fit its column, a row of the wrong width, or
                an UPDATE without its old row (canal-json always carries `old`).
            MessageTooLargeError: above max-message-bytes and the policy cannot help.
        """
        value = self._row.marshal(change, too_large=False)
        return self._large.message(change, value)

    def _small(self, change: RowChange, location: str) -> bytes:
        """The handle-key form of a change (naming the claim-check `location`)."""
        return self._row.marshal(change, too_large=True, claim_check_location=location)

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch:
        """The messages of a whole batch of this table, rendered column-wise (built on the
        first batch): what `encode_row` gives for each event, without the large-message
        policy (the writer takes messages above max-message-bytes from `encode_row`), those
        only the row path can write listed in `row_path`."""
        if self._batch is None:
            self._batch = CanalJsonBatchEncoder(self._table)
        encoded = self._batch.encode_batch(batch, key_indexes)
        return compress_batch(encoded, self.config.large_message_handle_compression)

    def encode_bootstrap(self) -> None:
        """canal-json has no bootstrap message."""
        return None

    def encode_ddl(self, previous: TableSchema | None, query: str, commit_ts: int) -> Message:
        """A DDL message for this table (tiflow `newJSONMessageForDDL`): type CREATE when
        `previous` is None, else ALTER; null key, for partition 0 only (reference §4)."""
        kind = "CREATE" if previous is None else "ALTER"
        text = (
            f'{{"id":0,"database":{easyjson_quote(self.table.database)},'
            f'"table":{easyjson_quote(self.table.table)},"pkNames":null,"isDdl":true,"type":"{kind}",'
            f'"es":{commit_ts >> 18},"ts":{self.build_ts_ms},"sql":{easyjson_quote(query)},'
            '"sqlType":null,"mysqlType":null,"data":null,"old":null'
        )
        if self._table.extension:
            text += f',"_tidb":{{"commitTs":{commit_ts}}}' if commit_ts else ',"_tidb":{}'
        value = compress(self.config.large_message_handle_compression, (text + "}").encode())
        return Message(key=None, value=value, commit_ts=commit_ts, rows=0)


def build_encoder(
    config: CodecConfig,
    table: TableSchema,
    *,
    build_ts_ms: int,
    topic: str,
    registry: SchemaRegistry | None,
    claim_check: ClaimCheckStore | None,
) -> CanalJsonEncoder:
    """The encoder of one table (`protocols.build_encoder`); `topic` and `registry` are
    avro's."""
    return CanalJsonEncoder(config, table, build_ts_ms=build_ts_ms, claim_check=claim_check)


def encode_table_ddl(
    config: CodecConfig,
    table: TableSchema,
    previous: TableSchema | None,
    query: str,
    *,
    commit_ts: int,
    build_ts_ms: int,
) -> Message:
    """The DDL message announcing `table` (`protocols.encode_ddl`), for partition 0."""
    encoder = CanalJsonEncoder(config, table, build_ts_ms=build_ts_ms)
    return encoder.encode_ddl(previous, query, commit_ts)


def encode_watermark(config: CodecConfig, commit_ts: int, *, build_ts_ms: int) -> Message | None:
    """The TIDB_WATERMARK message (tiflow `newJSONMessage4CheckpointEvent`, goccy/go-json in
    struct order), or None without enable-tidb-extension, as TiCDC sends none then. Null
    key (tiflow's sync producer path)."""
    if not config.enable_tidb_extension:
        return None
    # `watermarkTs` is `omitempty` in tiflow's tidbExtension struct.
    extension = f'{{"watermarkTs":{commit_ts}}}' if commit_ts else "{}"
    value = (
        f'{{"id":0,"database":"","table":"","pkNames":null,"isDdl":false,'
        f'"type":"{WATERMARK_TYPE}","es":{commit_ts >> 18},"ts":{build_ts_ms},"sql":"",'
        f'"sqlType":null,"mysqlType":null,"data":null,"old":null,"_tidb":{extension}}}'
    )
    data = compress(config.large_message_handle_compression, value.encode())
    return Message(key=None, value=data, commit_ts=commit_ts)

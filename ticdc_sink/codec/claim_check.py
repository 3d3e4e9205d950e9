"""The claim-check file of a message above max-message-bytes: its name and its bytes
(tiflow `pkg/sink/kafka/claimcheck/claim_check.go`, `common.ClaimCheckMessage`).

Content: Go's `json.Marshal` of `ClaimCheckMessage{Key, Value}`, i.e.
`{"key":null,"value":"<base64 of the value>"}` (simple and canal-json messages have no
key, and Go writes a nil `[]byte` as `null`, others as standard padded base64), or the raw
value bytes with `claim-check-raw-value=true`.

Name (a deliberate deviation from TiCDC): TiCDC names the file `uuid.NewString() + ".json"`,
a random version-4 UUID, so a replayed task would send a message naming another file. Here
the name is a version-5 UUID (SHA-1, fixed namespace) of the table, the commit ts, the
handle key and the SHA-256 of the stored value, plus ".json": same shape and length, but a
replay (task retry, streaming re-run of a batch, whose value bytes are identical because
buildTs is fixed per batch) writes the same file name with the same content and sends a
byte-identical message. Two different messages get different names.
"""

from __future__ import annotations

import base64
import hashlib
import uuid
from typing import TYPE_CHECKING

from ticdc_sink.errors import ConfigError

if TYPE_CHECKING:
    from ticdc_sink.codec import ClaimCheckStore

__all__ = ["NAMESPACE", "file_content", "file_name", "store_message"]

#: The namespace of claim-check file names (uuid5 of "ticdc_sink.claim-check" in the URL
#: namespace), fixed forever so names stay stable across versions.
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "ticdc_sink.claim-check")


def file_name(table: str, commit_ts: int, key: str, value: bytes) -> str:
    """`<uuid5>.json` for the message of `table` (db.table) at `commit_ts` whose handle
    key text is `key` and whose full value is `value`."""
    digest = hashlib.sha256(value).hexdigest()
    name = "\x00".join((table, str(commit_ts), key, digest))
    return f"{uuid.uuid5(NAMESPACE, name)}.json"


def file_content(key: bytes | None, value: bytes, *, raw_value: bool) -> bytes:
    """What the file holds: the Go JSON envelope, or only `value` when `raw_value`."""
    if raw_value:
        return value
    key_json = b"null" if key is None else b'"' + base64.b64encode(key) + b'"'
    return b'{"key":' + key_json + b',"value":"' + base64.b64encode(value) + b'"}'


def store_message(
    store: ClaimCheckStore | None,
    *,
    table: str,
    commit_ts: int,
    key: str,
    value: bytes,
    raw_value: bool,
    message_key: bytes | None = None,
) -> str:
    """Write the full `value` of a message above max-message-bytes (and its Kafka key
    `message_key`: open-protocol's; simple and canal-json have none) to the claim-check
    store, before the message naming it is produced; the location that message names.

    Raises:
        ConfigError: the encoder was built without a store.
    """
    if store is None:
        raise ConfigError(
            "large-message-handle-option is claim-check but the encoder has no "
            "claim-check store; build it with claim_check=",
            option="large-message-handle-option",
        )
    name = file_name(table, commit_ts, key, value)
    store.write(name, file_content(message_key, value, raw_value=raw_value))
    return store.location(name)

"""`large-message-handle-compression`: the compression TiCDC applies to message values
inside the encoder (tiflow `pkg/compression/compress.go`, called through
`pkg/sink/codec/common/compress.go`), and its inverse for the decoders.

`snappy` is Snappy's raw block format (not framed): TiCDC uses klauspost/compress's
`snappy.Encode`; `lz4` is the LZ4 frame format: TiCDC uses pierrec/lz4 v4's writer. Both
are written here with cramjam (the Snappy and LZ4 reference libraries' Rust ports). Any
decoder of each format reads the other's output, but compressed bytes are not the same
across encoders: the decompressed value is TiCDC's byte for byte, the compressed one is
not. Kafka's own producer compression (`compression`) is another, transport-level thing.
"""

from __future__ import annotations

import cramjam

from ticdc_sink.codec import RECORD_OVERHEAD, EncodedBatch
from ticdc_sink.codec.choices import LargeMessageCompression as Compression
from ticdc_sink.errors import DecodeError

__all__ = ["Compression", "compress", "compress_batch", "compression_named", "decompress"]


def compress(compression: Compression, data: bytes) -> bytes:
    """`data` compressed as TiCDC's `compression.Encode` does (`none`: as it is)."""
    if compression is Compression.SNAPPY:
        return bytes(cramjam.snappy.compress_raw(data))
    if compression is Compression.LZ4:
        return bytes(cramjam.lz4.compress(data))
    return data


def compress_batch(
    encoded: EncodedBatch, compression: Compression, *, keys: bool = False
) -> EncodedBatch:
    """A column-wise batch with every rendered value (and key, with `keys`: debezium)
    compressed as `encode_row` compresses it, and sizes counted again on the compressed
    bytes (TiCDC checks max-message-bytes after compressing). Placeholders of the row
    path stay."""
    if compression is Compression.NONE:
        return encoded
    row_path = set(encoded.row_path)
    values = encoded.values
    for i, value in enumerate(values):
        if value is not None and i not in row_path:
            values[i] = compress(compression, value)
    if keys:
        if encoded.keys is not None:
            encoded.keys = [
                k if k is None or i in row_path else compress(compression, k)
                for i, k in enumerate(encoded.keys)
            ]
        elif encoded.key is not None:
            encoded.keys = [
                None if i in row_path else compress(compression, encoded.key)
                for i in range(len(values))
            ]
    if encoded.sizes is not None:
        message_keys = encoded.keys or [encoded.key] * len(values)
        encoded.sizes = [
            size if i in row_path else len(k or b"") + len(v or b"") + RECORD_OVERHEAD
            for i, (size, k, v) in enumerate(zip(encoded.sizes, message_keys, values, strict=True))
        ]
    return encoded


def compression_named(name: str) -> Compression:
    """A decoder's `compression` argument, as the option spells it.

    Raises:
        DecodeError: an unknown name.
    """
    try:
        return Compression(str(name).strip().lower())
    except ValueError:
        allowed = ", ".join(c.value for c in Compression)
        raise DecodeError(
            f"large-message-handle-compression {name!r} is unknown; use {allowed}"
        ) from None


def decompress(compression: Compression, data: bytes) -> bytes:
    """`data` decompressed as TiCDC's `compression.Decode` does.

    Raises:
        DecodeError: `data` is not in that format.
    """
    if compression is Compression.NONE:
        return data
    try:
        if compression is Compression.SNAPPY:
            return bytes(cramjam.snappy.decompress_raw(data))
        return bytes(cramjam.lz4.decompress(data))
    except cramjam.DecompressionError as exc:
        raise DecodeError(
            f"a value is not {compression.value}-compressed ({exc}); decode with the "
            "large-message-handle-compression the sink wrote with"
        ) from None

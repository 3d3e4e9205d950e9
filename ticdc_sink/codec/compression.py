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

from ticdc_sink.config import LargeMessageCompression as Compression
from ticdc_sink.errors import DecodeError

__all__ = ["Compression", "compress", "decompress"]


def compress(compression: Compression, data: bytes) -> bytes:
    """`data` compressed as TiCDC's `compression.Encode` does (`none`: as it is)."""
    if compression is Compression.SNAPPY:
        return bytes(cramjam.snappy.compress_raw(data))
    if compression is Compression.LZ4:
        return bytes(cramjam.lz4.compress(data))
    return data


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

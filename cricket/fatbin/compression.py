"""Decompression of fatbin entry payloads, with every size checked first.

CUDA 13 writes zstd by default, LZ4 block for ``--compress-mode=speed``, and the
hidden ``fatbinary --compress-algorithm`` also produces zlib and LZ4 frames.
The header's ``uncompressed_size`` is checked against the limit below and
against what the format can possibly expand to *before* any output buffer is
allocated, and the output is cut off one byte past the promised size, so a
decompression bomb costs at most the size it claims.
"""
from __future__ import annotations

import zlib
from typing import Callable

import lz4.block
import lz4.frame
import zstandard

from .errors import DecompressionError
from .format import Compression

#: Largest image we agree to decompress (one cubin or PTX text). The largest
#: images in NVIDIA's own libraries are tens of MB.
MAX_IMAGE_SIZE = 1 << 30

# The most a byte of input can expand to, per format, plus a small constant for
# headers; a header claiming more than this is corrupt.
_MAX_RATIO = {
    Compression.ZLIB: 1032,         # deflate's documented maximum
    Compression.LZ4_BLOCK: 256,     # one literal-length byte per 255 matched bytes
    Compression.LZ4_FRAME: 256,
    Compression.ZSTD: 1 << 17,      # an RLE block: 128 KiB from a few bytes
}

_zstd = zstandard.ZstdDecompressor()


class _Corrupt(Exception):
    """Raised by a decoder; :func:`decompress` adds the entry's name."""


def decompress(data: bytes | memoryview, method: Compression, size: int,
               what: str | Callable[[], str]) -> bytes:
    """Decompress ``data`` (exactly the compressed bytes) to exactly ``size`` bytes.

    ``what`` names the entry in error messages (a callable is called only on error).
    Raises :class:`DecompressionError`.
    """
    try:
        return _decompress(data, method, size)
    except DecompressionError as exc:
        name = what() if callable(what) else what
        raise DecompressionError(f"{name}: {exc}") from exc.__cause__


def _decompress(data: bytes | memoryview, method: Compression, size: int) -> bytes:
    if method is Compression.NONE:
        return bytes(data)
    if size <= 0:
        raise DecompressionError(f"{method.value}-compressed but the header gives no "
                                 f"uncompressed size; the fatbin is corrupt")
    if size > MAX_IMAGE_SIZE:
        raise DecompressionError(f"header claims {size} bytes uncompressed, more than the "
                                 f"{MAX_IMAGE_SIZE}-byte limit; the fatbin is corrupt")
    if size > len(data) * _MAX_RATIO[method] + 1024:
        raise DecompressionError(f"header claims {size} bytes from {len(data)} {method.value} "
                                 f"bytes, more than {method.value} can expand to; the fatbin is corrupt")
    try:
        out = _DECODERS[method](bytes(data), size)
    except _Corrupt as exc:
        raise DecompressionError(f"{exc}; the fatbin is corrupt") from None
    except (zlib.error, lz4.block.LZ4BlockError, RuntimeError, ValueError, zstandard.ZstdError,
            MemoryError) as exc:
        raise DecompressionError(f"{method.value} data is corrupt or truncated ({exc})") from exc
    if len(out) != size:
        raise DecompressionError(f"{method.value} data decompressed to {len(out)} bytes but the "
                                 f"header says {size}; the fatbin is corrupt or truncated")
    return out


def _zlib(data: bytes, size: int) -> bytes:
    d = zlib.decompressobj()
    out = d.decompress(data, size + 1)
    if len(out) > size or d.unconsumed_tail:
        raise _Corrupt(f"zlib stream expands past the {size} bytes the header says")
    if not d.eof:
        raise _Corrupt("zlib stream is truncated")
    return out


def _lz4_block(data: bytes, size: int) -> bytes:
    # python-lz4 fails unless the block decodes to exactly `size` bytes.
    return lz4.block.decompress(data, uncompressed_size=size)


def _lz4_frame(data: bytes, size: int) -> bytes:
    info = lz4.frame.get_frame_info(data)
    claimed = info.get("content_size") or 0
    if claimed and claimed != size:
        raise _Corrupt(f"LZ4 frame says {claimed} bytes but the header says {size}")
    d = lz4.frame.LZ4FrameDecompressor()
    out = d.decompress(data, max_length=size + 1)
    if len(out) > size:
        raise _Corrupt(f"LZ4 frame expands past the {size} bytes the header says")
    if not d.eof:
        raise _Corrupt("LZ4 frame is truncated")
    return out


def _zstd_frame(data: bytes, size: int) -> bytes:
    claimed = zstandard.frame_content_size(data)
    if claimed >= 0 and claimed != size:
        raise _Corrupt(f"zstd frame says {claimed} bytes but the header says {size}")
    # With or without a content size in the frame, the output buffer is `size` bytes
    # and a frame that needs more fails instead of growing it.
    return _zstd.decompress(data, max_output_size=size)


_DECODERS = {
    Compression.ZLIB: _zlib,
    Compression.LZ4_BLOCK: _lz4_block,
    Compression.LZ4_FRAME: _lz4_frame,
    Compression.ZSTD: _zstd_frame,
}

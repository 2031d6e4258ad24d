"""Every compression CUDA 13 writes decodes to the size the header promises; lies are caught."""
from __future__ import annotations

import time

import lz4.block
import lz4.frame
import pytest
import zlib
import zstandard

from cricket.fatbin import Compression, DecompressionError, Fatbin
from cricket.fatbin.compression import decompress
from cricket.fatbin.format import EntryFlag, EntryKind

from .helpers import container_bytes, entry_bytes, fixture


@pytest.mark.parametrize("name, method", [
    ("params_sm75_zlib.fatbin", Compression.ZLIB),
    ("params_sm75_lz4.fatbin", Compression.LZ4_BLOCK),
    ("params_sm75_lz4frame.fatbin", Compression.LZ4_FRAME),
    ("params_sm75_zstd.fatbin", Compression.ZSTD),
])
def test_fatbinary_output_decompresses_with_each_algorithm(name, method):
    fb = Fatbin.from_file(str(fixture(name)))
    assert [e.compression for e in fb.entries] == [method, method]
    elf, ptx = fb.entries
    assert elf.payload[:4] == b"\x7fELF" and len(elf.payload) == elf.header.uncompressed_size
    assert ptx.payload.endswith(b"\0") and len(ptx.payload) == ptx.header.uncompressed_size


def test_all_algorithms_give_identical_images():
    images = {n: [e.payload for e in Fatbin.from_file(str(fixture(n))).entries]
              for n in ("params_sm75_zlib.fatbin", "params_sm75_lz4.fatbin",
                        "params_sm75_lz4frame.fatbin", "params_sm75_zstd.fatbin")}
    first = next(iter(images.values()))
    assert all(v == first for v in images.values())


COMPRESSORS = {
    Compression.ZLIB: (EntryFlag.ZLIB, zlib.compress),
    Compression.LZ4_BLOCK: (EntryFlag.LZ4_BLOCK, lambda d: lz4.block.compress(d, store_size=False)),
    Compression.LZ4_FRAME: (EntryFlag.LZ4_FRAME, lz4.frame.compress),
    Compression.ZSTD: (EntryFlag.ZSTD, zstandard.ZstdCompressor().compress),
}
PTX = b"\n\n.version 9.0\n.target sm_75\n.address_size 64\n.visible .entry k(\n.param .u32 k_param_0\n)\n{\nret;\n}\n\0"


@pytest.mark.parametrize("method", list(COMPRESSORS))
@pytest.mark.parametrize("delta", [-1, +1])
def test_wrong_uncompressed_size_names_the_entry(method, delta):
    flag, compress = COMPRESSORS[method]
    data = compress(PTX)
    fb = Fatbin.from_bytes(container_bytes(entry_bytes(EntryKind.PTX, 75, data, flags=0x11 | flag,
                                                       uncompressed_size=len(PTX) + delta)), "t.fatbin")
    with pytest.raises(DecompressionError, match=r"entry 0 \(PTX compute_75, .*\) of t.fatbin"):
        fb.entries[0].payload


def test_zstd_bomb_that_claims_a_small_size_is_refused_quickly():
    bomb_streamed = zstandard.ZstdCompressor(write_content_size=False).compress(b"\0" * (256 << 20))
    bomb_sized = zstandard.ZstdCompressor().compress(b"\0" * (256 << 20))
    for bomb in (bomb_streamed, bomb_sized):
        assert len(bomb) < 64 << 10
        fb = Fatbin.from_bytes(container_bytes(entry_bytes(
            EntryKind.ELF, 75, bomb, flags=0x11 | EntryFlag.ZSTD, uncompressed_size=4096)))
        start = time.perf_counter()
        with pytest.raises(DecompressionError, match="entry 0 .*zstd"):
            fb.entries[0].payload
        assert time.perf_counter() - start < 2.0     # did not expand 256 MiB


def test_size_beyond_what_the_format_can_expand_to_is_refused_before_allocating():
    data = lz4.block.compress(b"x" * 100, store_size=False)
    with pytest.raises(DecompressionError, match="more than lz4 can expand to"):
        decompress(data, Compression.LZ4_BLOCK, 900 << 20, "entry 3")
    with pytest.raises(DecompressionError, match="limit"):
        decompress(data, Compression.ZSTD, 1 << 40, "entry 3")


def test_corrupt_compressed_bytes_give_decompression_errors():
    for method, (flag, compress) in COMPRESSORS.items():
        data = bytearray(compress(PTX * 20))
        for i in range(len(data) // 3, len(data), 7):
            data[i] ^= 0xFF
        with pytest.raises(DecompressionError):
            decompress(bytes(data), method, len(PTX) * 20, "entry 0")

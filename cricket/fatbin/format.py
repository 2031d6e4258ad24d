"""The on-disk structures of fatbins, named once.

Layouts follow ``shared/docs/fatbin-format.md`` (CUDA 13.0, verified on files
nvcc builds): the 24-byte ``__fatBinC_Wrapper_t``, the 16-byte container header
(``fatBinaryHeader``) and the entry header (64 bytes plus an extension whose
length the header states). All little-endian.
"""
from __future__ import annotations

import enum
import struct
from typing import NamedTuple

from ..cudafacts.fatbin_magic import CONTAINER_MAGIC, WRAPPER_MAGIC

WRAPPER_VERSION_PLAIN = 1
WRAPPER_VERSION_LINKED = 2          # FATBINC_LINK_VERSION: also points at the prelinked array


class WrapperHeader(NamedTuple):
    """``__fatBinC_Wrapper_t`` as it sits in ``.nvFatBinSegment``."""
    magic: int
    version: int
    data: int                       # address of the container (fatBinaryHeader)
    filename_or_fatbins: int        # v1: unused (0); v2: address of a NULL-terminated void*[] of containers


WRAPPER_STRUCT = struct.Struct("<IIQQ")
assert WRAPPER_STRUCT.size == 24


class ContainerHeader(NamedTuple):
    """``fatBinaryHeader``: the container that holds the entries."""
    magic: int
    version: int
    header_size: int
    fat_size: int                   # bytes after the header: sum of (entry header + payload)


CONTAINER_STRUCT = struct.Struct("<IHHQ")
assert CONTAINER_STRUCT.size == 16


class EntryHeader(NamedTuple):
    """The header in front of every image in a container (64 bytes, then its extension)."""
    kind: int                       # EntryKind
    version: int                    # 0x0101 in every file seen
    header_size: int                # step to the payload; 0x40 .. 0x88 and more
    payload_size: int               # bytes stored after the header (aligned to 8)
    compressed_size: int            # exact compressed length, 0 when not compressed
    options_offset: int             # 0 or offset (from entry start) of {u32 str_off; u32 str_len}
    minor: int                      # ELF: 8; PTX: ISA minor
    major: int                      # ELF: 1; PTX: ISA major
    arch: int                       # SM number, 75, 90, 100, ...
    name_offset: int                # 0 or offset (from entry start) of the identifier string
    name_len: int                   # identifier length without the NUL
    flags: int                      # EntryFlag
    reserved: int                   # 0 for ELF/PTX
    uncompressed_size: int          # size after decompression (PTX includes the NUL), 0 if not compressed


ENTRY_STRUCT = struct.Struct("<HHIQIIHHIIIQQQ")
assert ENTRY_STRUCT.size == 64
ENTRY_MIN_HEADER = ENTRY_STRUCT.size

OPTIONS_DESCRIPTOR = struct.Struct("<II")   # {u32 string offset (from entry start), u32 length}


class EntryKind(enum.IntEnum):
    PTX = 1
    ELF = 2
    LTOIR = 8


class EntryFlag(enum.IntFlag):
    BIT64 = 0x1
    DEBUG = 0x2
    CUDA = 0x4
    OPENCL = 0x8
    HOST_LINUX = 0x10
    HOST_MAC = 0x20
    HOST_WINDOWS = 0x40
    ZLIB = 0x1000
    LZ4_BLOCK = 0x2000
    LZ4_FRAME = 0x4000
    ZSTD = 0x8000
    LTOIR_OBFUSCATED = 0x10000      # seen on every LTO-IR entry
    ARCH_SPECIFIC = 0x100000        # sm_90a, compute_100a ...: runs on that exact arch only
    FAMILY_SPECIFIC = 0x200000      # sm_100f ...: runs within the family
    BINARY_OPTIONS = 0x1000000      # sm_100+ ELF: the options descriptor points at binary data


COMPRESSION_FLAGS = EntryFlag.ZLIB | EntryFlag.LZ4_BLOCK | EntryFlag.LZ4_FRAME | EntryFlag.ZSTD


class Compression(enum.Enum):
    NONE = "none"
    ZLIB = "zlib"
    LZ4_BLOCK = "lz4"
    LZ4_FRAME = "lz4-frame"
    ZSTD = "zstd"


_FLAG_TO_COMPRESSION = {
    EntryFlag.ZLIB: Compression.ZLIB,
    EntryFlag.LZ4_BLOCK: Compression.LZ4_BLOCK,
    EntryFlag.LZ4_FRAME: Compression.LZ4_FRAME,
    EntryFlag.ZSTD: Compression.ZSTD,
}


def compression_of(flags: int) -> Compression | None:
    """The compression an entry's flags name; None when more than one is set (corrupt)."""
    bits = flags & COMPRESSION_FLAGS
    if not bits:
        return Compression.NONE
    return _FLAG_TO_COMPRESSION.get(EntryFlag(bits))


def flag_names(flags: int) -> list[str]:
    """Names of the known bits in ``flags``, then any unknown bits in hex."""
    names = [f.name.lower() for f in EntryFlag if flags & f.value]
    unknown = flags & ~sum(f.value for f in EntryFlag)
    if unknown:
        names.append(hex(unknown))
    return names


def align8(n: int) -> int:
    return (n + 7) & ~7

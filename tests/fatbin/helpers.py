"""Test helpers: the committed fixture files, fatbin containers built by hand (for corruption
tests), decode everything."""
from __future__ import annotations

import pathlib

from cricket.fatbin import Fatbin
from cricket.fatbin.format import (CONTAINER_MAGIC, CONTAINER_STRUCT, ENTRY_STRUCT, EntryFlag,
                                   EntryKind, align8)

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
FIXTURE_FILES = sorted(p.name for p in FIXTURES.glob("*.fatbin"))


def fixture(name: str) -> pathlib.Path:
    """The committed fixture file ``name`` (fixtures/, made by make_fixtures.py)."""
    return FIXTURES / name


def entry_bytes(kind: EntryKind, arch: int, payload: bytes, *, flags: int = 0x11,
                uncompressed_size: int = 0, compressed_size: int | None = None,
                payload_size: int | None = None) -> bytes:
    """One entry: a 64-byte header and the payload padded to 8."""
    compressed = flags & (EntryFlag.ZLIB | EntryFlag.LZ4_BLOCK | EntryFlag.LZ4_FRAME | EntryFlag.ZSTD)
    if compressed_size is None:
        compressed_size = len(payload) if compressed else 0
    padded = payload + b"\0" * (align8(len(payload)) - len(payload))
    if payload_size is None:
        payload_size = len(padded)
    major, minor = (9, 0) if kind == EntryKind.PTX else (1, 8)
    header = ENTRY_STRUCT.pack(kind, 0x0101, ENTRY_STRUCT.size, payload_size, compressed_size, 0,
                               minor, major, arch, 0, 0, flags, 0, uncompressed_size)
    return header + padded


def container_bytes(*entries: bytes, fat_size: int | None = None) -> bytes:
    body = b"".join(entries)
    return CONTAINER_STRUCT.pack(CONTAINER_MAGIC, 1, CONTAINER_STRUCT.size,
                                 len(body) if fat_size is None else fat_size) + body


def decode_everything(fb: Fatbin) -> int:
    """Walk, decompress and parse every entry and kernel; returns the number of kernels seen."""
    n = 0
    for e in fb.all_entries():
        _ = (e.name, e.options, e.size)
        if e.is_elf:
            c = e.cubin
            _ = c.variables
            for k in c.kernels():
                n += 1
                _ = k.offsets_and_sizes
        elif e.is_ptx:
            for k in e.ptx.kernels():
                n += 1
    return n

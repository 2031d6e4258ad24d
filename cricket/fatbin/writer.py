"""Writing a fatbin container: uncompressed PTX and ELF entries, each with an identifier; and
recognising the container of a JIT link (``cricket.client.jit_link``), whose entries are the
link's inputs, each named ``cricket-link:<input>``.

The layout is the one ``format.py`` names (and ``container.py`` reads): the 16-byte container
header, then per entry the 64-byte entry header, its extension (here the identifier string,
NUL-terminated and padded to 8) and the payload padded to 8.
"""
from __future__ import annotations

from dataclasses import dataclass

from .container import Fatbin, FatbinEntry
from .errors import FatbinError
from .format import (CONTAINER_MAGIC, CONTAINER_STRUCT, ENTRY_MIN_HEADER, ENTRY_STRUCT, EntryFlag,
                     EntryKind, align8)

ENTRY_VERSION = 0x0101          # in every entry nvcc writes
CONTAINER_VERSION = 1
HOST_FLAGS = EntryFlag.BIT64 | EntryFlag.HOST_LINUX
#: the identifier prefix of every entry of a JIT link's container
LINK_INPUT_PREFIX = "cricket-link:"


@dataclass(frozen=True)
class NewEntry:
    """One entry to write: ``payload`` is the cubin, or the PTX text (a NUL is added)."""
    kind: EntryKind
    arch: int
    payload: bytes
    name: str = ""
    ptx_version: tuple[int, int] = (0, 0)    # PTX ISA (major, minor); ELF entries write 1.8


def _entry(e: NewEntry) -> bytes:
    payload = e.payload + b"\0" if e.kind == EntryKind.PTX and not e.payload.endswith(b"\0") else e.payload
    padded = payload + b"\0" * (align8(len(payload)) - len(payload))
    name = e.name.encode()
    extension = name + b"\0" * (align8(len(name) + 1) - len(name)) if name else b""
    major, minor = e.ptx_version if e.kind == EntryKind.PTX else (1, 8)
    header = ENTRY_STRUCT.pack(e.kind, ENTRY_VERSION, ENTRY_MIN_HEADER + len(extension), len(padded), 0, 0,
                               minor, major, e.arch, ENTRY_MIN_HEADER if name else 0, len(name),
                               HOST_FLAGS, 0, 0)
    return header + extension + padded


def container(entries: list[NewEntry]) -> bytes:
    """A container holding ``entries`` in order, uncompressed."""
    body = b"".join(_entry(e) for e in entries)
    return CONTAINER_STRUCT.pack(CONTAINER_MAGIC, CONTAINER_VERSION, CONTAINER_STRUCT.size, len(body)) + body


def link_inputs(image: bytes) -> list[FatbinEntry]:
    """The entries of a JIT link's container (every entry named ``cricket-link:...``), else []."""
    try:
        entries = Fatbin.from_bytes(image, "<module image>").entries
        if entries and all((e.name or "").startswith(LINK_INPUT_PREFIX) for e in entries):
            return list(entries)
    except FatbinError:
        pass                # not for us to judge: the module loader reports a bad image
    return []

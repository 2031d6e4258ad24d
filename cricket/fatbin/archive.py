"""Static libraries (``ar`` archives, as ``nvcc -lib`` writes them): the members, by name.

Layout (System V / GNU ``ar``): the magic ``!<arch>\\n``, then per member a 60-byte header of
text fields (name 16, date 12, uid 6, gid 6, mode 8, size 10, the terminator ``\\x60\\n``) and
the member's bytes, padded to an even offset. GNU names end with ``/``; ``/N`` is the name at
offset N of the ``//`` member; ``/`` and ``/SYM64/`` are symbol tables.
"""
from __future__ import annotations

import struct

from .errors import FormatError

MAGIC = b"!<arch>\n"
MEMBER_HEADER = struct.Struct("16s12s6s6s8s10s2s")
TERMINATOR = b"\x60\n"
SYMBOL_TABLES = (b"/", b"/SYM64/")
LONG_NAMES = b"//"


def is_archive(data: bytes | memoryview) -> bool:
    return bytes(data[:len(MAGIC)]) == MAGIC


def archive_members(data: bytes | memoryview, origin: str) -> list[tuple[str, bytes]]:
    """(name, bytes) of every member that is not a symbol or name table, in order."""
    data = memoryview(data)
    if not is_archive(data):
        raise FormatError(f"{origin}: not an ar archive (no {MAGIC!r} magic)")
    members: list[tuple[str, bytes]] = []
    long_names = b""
    offset = len(MAGIC)
    while offset < len(data):
        if offset + MEMBER_HEADER.size > len(data):
            raise FormatError(f"{origin}: member header at {offset} runs past the end; the archive is truncated")
        name, _, _, _, _, size_text, terminator = MEMBER_HEADER.unpack_from(data, offset)
        if terminator != TERMINATOR:
            raise FormatError(f"{origin}: member header at {offset} does not end with `\\n; the archive is corrupt")
        try:
            size = int(size_text.strip() or b"0")
        except ValueError:
            raise FormatError(f"{origin}: member at {offset} has size {size_text!r}") from None
        start = offset + MEMBER_HEADER.size
        if size < 0 or start + size > len(data):
            raise FormatError(f"{origin}: member at {offset} claims {size} bytes, past the end; the archive "
                              "is truncated")
        body = bytes(data[start:start + size])
        name = name.rstrip(b" ")
        if name == LONG_NAMES:
            long_names = body
        elif name not in SYMBOL_TABLES:
            members.append((_member_name(name, long_names), body))
        offset = start + size + (size & 1)
    return members


def _member_name(name: bytes, long_names: bytes) -> str:
    if name.startswith(b"/") and name[1:].isdigit():
        at = int(name[1:])
        end = long_names.find(b"/\n", at)
        name = long_names[at:end if end >= 0 else len(long_names)]
    return name.rstrip(b"/").decode("utf-8", "replace")

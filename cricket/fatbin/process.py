"""Device code of every ELF object loaded in this process, for applications whose
``__cudaRegisterFatBinary`` cannot be interposed (nvcc's default static cudart binds it
inside the executable or library).

For each mapped file with a ``.nvFatBinSegment``, the wrappers nvcc's start-up code
registers are read where the loader put them (load base + link-time address), so
pointers are the relocated ones and a version-2 wrapper's prelinked array is the one
filled at run time.
"""
from __future__ import annotations

import logging
import struct
from dataclasses import dataclass

from .container import Fatbin
from .errors import FatbinError
from .hostelf import WRAPPER_SECTION, find_device_code
from .memory import Mapping, ProcessMemory, process_memory, read_maps

log = logging.getLogger(__name__)

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_PHDR = struct.Struct("<IIQQQQQQ")
PT_LOAD = 1
ET_EXEC = 2
PAGE = 0x1000


@dataclass(frozen=True)
class LoadedObject:
    path: str
    base: int                   # load bias: runtime address = base + link-time address


def loaded_objects(maps: list[Mapping] | None = None) -> list[LoadedObject]:
    """ELF files mapped in this process, with their load bias."""
    maps = maps if maps is not None else read_maps()
    seen: dict[str, LoadedObject] = {}
    for m in maps:
        if not m.path.startswith("/") or m.path in seen or m.offset != 0:
            continue
        base = _load_bias(m)
        if base is not None:
            seen[m.path] = LoadedObject(m.path, base)
    return list(seen.values())


def _load_bias(m: Mapping) -> int | None:
    try:
        with open(m.path, "rb") as f:
            head = f.read(_EHDR.size)
            if len(head) < _EHDR.size or head[:4] != b"\x7fELF" or head[4] != 2:
                return None
            fields = _EHDR.unpack(head)
            e_type, phoff, phentsize, phnum = fields[1], fields[5], fields[9], fields[10]
            if e_type == ET_EXEC:
                return 0
            f.seek(phoff)
            table = f.read(phentsize * phnum)
    except OSError:
        return None
    for i in range(phnum):
        if (i + 1) * phentsize > len(table):
            break
        p_type, _, p_offset, p_vaddr = _PHDR.unpack_from(table, i * phentsize)[:4]
        if p_type == PT_LOAD and p_offset < PAGE:       # the segment mapped at file offset 0
            return m.start - (p_vaddr & ~(PAGE - 1))
    return None


def loaded_fatbins(memory: ProcessMemory | None = None) -> list[Fatbin]:
    """The fatbins nvcc's start-up code registered in every object loaded in this process,
    decoded from memory. Objects without device code are skipped quickly."""
    mem = memory or process_memory()
    out: list[Fatbin] = []
    for obj in loaded_objects():
        if not _has_wrapper_section(obj.path):
            continue
        try:
            code = find_device_code(obj.path)
        except FatbinError as exc:
            log.warning("skipping %s: %s", obj.path, exc)
            continue
        for fb in code.registered():
            w = fb.wrapper
            if w is None or w.address is None:
                continue
            out.append(Fatbin.from_wrapper_address(obj.base + w.address, mem))
    return out


def _has_wrapper_section(path: str) -> bool:
    """Cheap check on the section names, so libc and friends cost one read each."""
    try:
        with open(path, "rb") as f:
            head = f.read(_EHDR.size)
            if len(head) < _EHDR.size or head[:4] != b"\x7fELF" or head[4] != 2:
                return False
            fields = _EHDR.unpack(head)
            shoff, shentsize, shnum, shstrndx = fields[6], fields[11], fields[12], fields[13]
            if not shoff or shentsize != 64 or not shnum or shstrndx >= shnum:
                return False
            f.seek(shoff + shstrndx * 64)
            sh = f.read(64)
            str_off, str_size = struct.unpack_from("<QQ", sh, 24)
            if str_size > 1 << 24:
                return False
            f.seek(str_off)
            return WRAPPER_SECTION.encode() + b"\0" in f.read(str_size)
    except (OSError, struct.error):
        return False


__all__ = ["LoadedObject", "loaded_objects", "loaded_fatbins"]

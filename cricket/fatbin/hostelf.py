"""Finding the device code in a file: executable, shared object, object file, ``.fatbin``, ``.cubin``.

A host ELF keeps its containers in ``.nv_fatbin`` (whole-program TUs and the
device-link image) and ``__nv_relfatbin`` (``-rdc`` TUs), and the wrappers
that point at them in ``.nvFatBinSegment``. Files are memory-mapped; nothing
inside a container is read until asked for.
"""
from __future__ import annotations

import logging
import mmap
import os
import struct
from dataclasses import dataclass, field

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from .container import Fatbin, Wrapper, iter_containers, parse_wrapper
from .cubin import EM_CUDA, Cubin
from .errors import FatbinError, FormatError
from .format import CONTAINER_MAGIC, WRAPPER_STRUCT, WRAPPER_VERSION_LINKED

log = logging.getLogger(__name__)

FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
WRAPPER_SECTION = ".nvFatBinSegment"
R_X86_64_RELATIVE = 8
R_X86_64_64 = 1
_RELA = struct.Struct("<QQq")
_SYM = struct.Struct("<IBBHQQ")


@dataclass
class DeviceCode:
    """Everything :func:`find_device_code` found in one file."""
    path: str
    #: "executable", "shared-object", "relocatable", "fatbin" or "cubin"
    file_kind: str
    fatbins: list[Fatbin] = field(default_factory=list)
    #: a raw ``.cubin`` file
    cubins: list[Cubin] = field(default_factory=list)
    wrappers: list[Wrapper] = field(default_factory=list)

    def registered(self) -> list[Fatbin]:
        """The fatbins nvcc's start-up code passes to ``__cudaRegisterFatBinary``."""
        return [f for f in self.fatbins if f.registered]

    def kernel_names(self) -> list[str]:
        names: dict[str, None] = {}
        for f in self.fatbins:
            names.update(dict.fromkeys(f.kernel_names()))
        for c in self.cubins:
            names.update(dict.fromkeys(c.kernel_names))
        return list(names)


def find_device_code(path: str | os.PathLike) -> DeviceCode:
    """Read the device code in ``path``. Raises :class:`FatbinError` for unreadable files."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                raise FormatError(f"{path}: empty file; expected an ELF file, a .fatbin or a .cubin")
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise FatbinError(f"{path}: cannot read ({exc.strerror})") from exc
    data = memoryview(mapped)
    name = os.path.basename(path)
    head = bytes(data[:20])
    if len(head) >= 4 and struct.unpack_from("<I", head)[0] == CONTAINER_MAGIC:
        return DeviceCode(path, "fatbin", list(iter_containers(data, name)))
    if head[:4] != b"\x7fELF":
        raise FormatError(f"{path}: not an ELF file, fatbin or cubin")
    if len(head) >= 20 and head[4] == 2 and struct.unpack_from("<H", head, 18)[0] == EM_CUDA:
        return DeviceCode(path, "cubin", cubins=[Cubin(data, name)])
    return _host_elf(path, name, mapped, data)


def _host_elf(path: str, name: str, mapped: mmap.mmap, data: memoryview) -> DeviceCode:
    try:
        elf = ELFFile(mapped)
        e_type = elf.header["e_type"]
        sections = {s.name: (i, s) for i, s in enumerate(elf.iter_sections())}
    except (ELFError, Exception) as exc:    # pyelftools raises many types on malformed input
        raise FormatError(f"{path}: malformed ELF ({exc})") from exc
    kind = {"ET_EXEC": "executable", "ET_DYN": "shared-object", "ET_REL": "relocatable"}.get(e_type, e_type)
    if e_type == "ET_DYN" and ".interp" in sections:
        kind = "executable"                 # PIE
    code = DeviceCode(path, kind)

    def section_bytes(sec) -> memoryview:
        off, size = sec["sh_offset"], sec["sh_size"]
        if sec["sh_type"] == "SHT_NOBITS":
            return memoryview(b"")
        if off + size > len(data):
            raise FormatError(f"{path}: section {sec.name} runs past the end of the file; it is truncated")
        return data[off:off + size]

    # Containers, keyed by where they are: link-time address (linked files) or (section index, offset).
    by_address: dict[int, Fatbin] = {}
    by_section: dict[tuple[int, int], Fatbin] = {}
    for sname in FATBIN_SECTIONS:
        if sname not in sections:
            continue
        index, sec = sections[sname]
        for fb in iter_containers(section_bytes(sec), name, sname):
            code.fatbins.append(fb)
            by_address[sec["sh_addr"] + fb.section_offset] = fb
            by_section[(index, fb.section_offset)] = fb

    if WRAPPER_SECTION not in sections:
        return code
    wrapper_index, wsec = sections[WRAPPER_SECTION]
    raw = section_bytes(wsec)
    relocations: dict | None = None     # read only when a pointer field needs it (large in big .so)
    for i in range(len(raw) // WRAPPER_STRUCT.size):
        off = i * WRAPPER_STRUCT.size
        where = f"{name}:{WRAPPER_SECTION}[{i}]"
        header = parse_wrapper(raw[off:off + WRAPPER_STRUCT.size], where)
        address = wsec["sh_addr"] + off
        wrapper = Wrapper(header, address if e_type != "ET_REL" else None, where)
        code.wrappers.append(wrapper)
        target = None
        if relocations is None and (e_type == "ET_REL" or not header.data):
            relocations = _relocations(elf, wrapper_index, e_type, section_bytes, path)
        if e_type == "ET_REL":
            reloc = relocations.get(off + 8)
            if reloc is not None:
                sym_section, value = reloc
                target = by_section.get((sym_section, value))
        else:
            data_ptr = header.data or relocations.get(address + 8, 0)  # type: ignore[union-attr]
            target = by_address.get(data_ptr)
        if target is None:
            log.warning("%s: wrapper data pointer leads to no container in %s", where,
                        "/".join(FATBIN_SECTIONS))
            continue
        target.wrapper = wrapper
    _mark_registered(code, e_type)
    return code


def _relocations(elf, wrapper_index: int, e_type: str, section_bytes, path: str) -> dict:
    """Linked files: {address: addend} of RELATIVE relocations (used when a field holds 0).
    Object files: {offset in .nvFatBinSegment: (section index of the symbol, value + addend)}."""
    out: dict = {}
    try:
        sections = list(elf.iter_sections())
    except Exception as exc:                # noqa: BLE001 -- pyelftools on malformed input
        raise FormatError(f"{path}: malformed section table ({exc})") from exc
    if e_type == "ET_REL":
        for sec in sections:
            if sec["sh_type"] != "SHT_RELA" or sec["sh_info"] != wrapper_index:
                continue
            if not 0 < sec["sh_link"] < len(sections):
                raise FormatError(f"{path}: {sec.name} links to section {sec['sh_link']}, which does "
                                  f"not exist; the file is corrupt")
            syms = section_bytes(sections[sec["sh_link"]])
            for r_offset, r_info, addend in _rela(section_bytes(sec), path, sec.name):
                sym = r_info >> 32
                if (sym + 1) * _SYM.size > len(syms):
                    continue
                _, _, _, shndx, value, _ = _SYM.unpack_from(syms, sym * _SYM.size)
                out[r_offset] = (shndx, value + addend)
        return out
    for sec in sections:
        if sec["sh_type"] != "SHT_RELA" or sec.name not in (".rela.dyn",):
            continue
        for r_offset, r_info, addend in _rela(section_bytes(sec), path, sec.name):
            if r_info & 0xFFFFFFFF == R_X86_64_RELATIVE:
                out[r_offset] = addend
    return out


def _rela(data: memoryview, path: str, name: str):
    if len(data) % _RELA.size:
        raise FormatError(f"{path}: {name} is {len(data)} bytes, not a multiple of {_RELA.size}; "
                          f"the file is corrupt")
    return _RELA.iter_unpack(data)


def _mark_registered(code: DeviceCode, e_type: str) -> None:
    """Which containers reach ``__cudaRegisterFatBinary`` at start-up (fatbin-format.md §1.2).

    Whole-program: every TU's version-1 wrapper into ``.nv_fatbin``; CUDA 13 also
    emits a version-2 device-link wrapper that is never registered. ``-rdc``: only
    the version-2 wrapper, whose prelinked array (filled at run time) lists the
    ``__nv_relfatbin`` containers of the TUs.
    """
    if e_type == "ET_REL":
        return
    relocatable = [f for f in code.fatbins if f.section == "__nv_relfatbin"]
    for f in code.fatbins:
        w = f.wrapper
        if w is None:
            f.registered = False
        elif w.version == WRAPPER_VERSION_LINKED:
            f.registered = bool(relocatable)
            if relocatable:
                f.prelinked = tuple(relocatable)
        else:
            f.registered = f.section == ".nv_fatbin"

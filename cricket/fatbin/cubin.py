"""Cubin (CUDA ELF) metadata: arch, kernels, ``.nv.info`` records, parameter layouts, variables.

pyelftools reads the ELF header and section table; symbols are read from the
raw ``.symtab`` bytes because pyelftools decodes only the visibility bits of
``st_other`` and kernels are marked by ``STO_CUDA_ENTRY`` (0x10) there.
Everything is parsed on first use and cached, per kernel.
"""
from __future__ import annotations

import functools
import io
import logging
import struct
from dataclasses import dataclass
from typing import NamedTuple

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from .eiattr import EIAttr, EIFormat, NvInfoRecord, parse_records
from .errors import CubinError, KernelNotFoundError
from .layout import KernelLayout, KernelParam

log = logging.getLogger(__name__)

EM_CUDA = 190
ELFOSABI_CUDA_V2 = 0x41            # CUDA 13: every arch
STO_CUDA_ENTRY = 0x10
SHT_CUDA_INFO = 0x70000000
STT_OBJECT, STT_FUNC = 1, 2
STB_GLOBAL, STB_WEAK = 1, 2
SHN_UNDEF = 0

PARAM_SPACE_POINTER = 5             # KPARAM "space" of a pointer parameter, sm_100+ only

_SYM = struct.Struct("<IBBHQQ")     # Elf64_Sym
_U32X2 = struct.Struct("<II")
_U32X3 = struct.Struct("<III")
_KPARAM = struct.Struct("<IHHI")    # index, ordinal, offset, bits (log-align 0-7, space 8-11, cbank 12-16, size 18-31)
_KPARAM_V2 = struct.Struct("<IHHHH")  # index, ordinal, offset, size, attrs (space in bits 8-11)
_PARAM_CBANK = struct.Struct("<IHH")  # section symbol, param base, param size

# pyelftools (and construct under it) raise many unrelated types on malformed
# input (ELFError, struct.error, construct errors, IndexError, ...); all of them
# mean "corrupt cubin" when they come out of a header or section-table read.
_ELF_ERRORS = (ELFError, Exception)  # noqa: B014 -- ELFError named for the reader


class Symbol(NamedTuple):
    index: int
    name: str
    info: int
    other: int
    shndx: int
    value: int
    size: int

    @property
    def type(self) -> int:
        return self.info & 0xF

    @property
    def is_kernel(self) -> bool:
        return self.type == STT_FUNC and bool(self.other & STO_CUDA_ENTRY)


@dataclass(frozen=True)
class DeviceVariable:
    """A ``__device__`` or ``__constant__`` variable defined in the cubin."""
    name: str
    size: int
    kind: str           # "device" or "constant"
    section: str

    def as_dict(self) -> dict:
        return {"name": self.name, "size": self.size, "kind": self.kind, "section": self.section}


def arch_from_e_flags(e_flags: int, abi_version: int) -> int:
    """SM number: bits 8-15 in the ABI-v8 layout CUDA 13 uses for every arch; the low byte before."""
    if abi_version >= 8:
        return (e_flags >> 8) & 0xFF
    return e_flags & 0xFF


class Cubin:
    """One cubin. ``Cubin(data)`` checks the ELF header; the rest is read on first use."""

    def __init__(self, data: bytes | bytearray | memoryview, origin: str = "<cubin>"):
        self.origin = origin
        self._data = bytes(data)
        d = self._data
        if len(d) < 64 or d[:4] != b"\x7fELF":
            raise CubinError(f"{origin}: not an ELF file (no \\x7fELF magic); expected a cubin")
        if d[4] != 2 or d[5] != 1:
            raise CubinError(f"{origin}: not a 64-bit little-endian ELF; CUDA cubins always are")
        try:
            self._elf = ELFFile(io.BytesIO(self._data))
            header = self._elf.header
            self.e_machine = header["e_machine"]
            self.e_flags = header["e_flags"]
            self.elf_type = header["e_type"]
            self.osabi = d[7]
            self.abi_version = d[8]
            shnum = self._elf.num_sections()
            shoff = header["e_shoff"]
            shentsize = header["e_shentsize"]
        except _ELF_ERRORS as exc:
            raise CubinError(f"{origin}: malformed ELF header ({exc})") from exc
        if self.e_machine not in ("EM_CUDA", EM_CUDA):
            raise CubinError(f"{origin}: ELF machine is {self.e_machine}, not EM_CUDA (190); not a cubin")
        if shnum and (shentsize != 64 or shoff + shnum * shentsize > len(d)):
            raise CubinError(f"{origin}: section table ({shnum} x {shentsize} bytes at {shoff}) "
                             f"lies outside the {len(d)}-byte file; the cubin is truncated")
        self.arch = arch_from_e_flags(self.e_flags, self.abi_version)
        self._kernels: dict[str, KernelLayout] = {}

    @property
    def size(self) -> int:
        return len(self._data)

    @property
    def data(self) -> bytes:
        return self._data

    # ---- sections and symbols -------------------------------------------------------------

    @functools.cached_property
    def _sections(self) -> list:
        try:
            sections = list(self._elf.iter_sections())
            for s in sections:
                s.name  # noqa: B018 -- force the name lookup while errors are still ours to wrap
        except _ELF_ERRORS as exc:
            raise CubinError(f"{self.origin}: malformed section table ({exc})") from exc
        return sections

    @functools.cached_property
    def _section_index(self) -> dict[str, int]:
        return {s.name: i for i, s in enumerate(self._sections)}

    def _section_data(self, index: int) -> bytes:
        s = self._sections[index]
        if s["sh_type"] == "SHT_NOBITS":
            return b""
        off, size = s["sh_offset"], s["sh_size"]
        if off + size > len(self._data):
            raise CubinError(f"{self.origin}: section {s.name} ({size} bytes at {off}) runs past the "
                             f"end of the {len(self._data)}-byte cubin; it is truncated")
        return self._data[off:off + size]

    def section_names(self) -> list[str]:
        return [s.name for s in self._sections]

    @functools.cached_property
    def symbols(self) -> tuple[Symbol, ...]:
        """Every ``.symtab`` entry, with the raw ``st_other`` byte."""
        symtab = next((i for i, s in enumerate(self._sections) if s["sh_type"] == "SHT_SYMTAB"), None)
        if symtab is None:
            return ()
        data = self._section_data(symtab)
        link = self._sections[symtab]["sh_link"]
        if not 0 < link < len(self._sections):
            raise CubinError(f"{self.origin}: .symtab links to section {link}, which does not exist")
        strtab = self._section_data(link)
        if len(data) % _SYM.size:
            raise CubinError(f"{self.origin}: .symtab is {len(data)} bytes, not a multiple of {_SYM.size}")
        out = []
        for i, (name_off, info, other, shndx, value, size) in enumerate(_SYM.iter_unpack(data)):
            if name_off >= len(strtab) and name_off:
                raise CubinError(f"{self.origin}: symbol {i} names string offset {name_off}, past the "
                                 f"{len(strtab)}-byte string table")
            end = strtab.find(b"\0", name_off)
            name = strtab[name_off:end if end >= 0 else len(strtab)].decode("utf-8", "replace")
            out.append(Symbol(i, name, info, other, shndx, value, size))
        return tuple(out)

    @functools.cached_property
    def _symbols_by_name(self) -> dict[str, Symbol]:
        return {s.name: s for s in self.symbols if s.name}

    @functools.cached_property
    def link_symbols(self) -> "LinkSymbols":
        """Global and weak symbols this (relocatable) cubin defines, and those it leaves undefined."""
        from .ptx import LinkSymbols
        defined, weak, undefined = set(), set(), set()
        for s in self.symbols:
            binding = s.info >> 4
            if not s.name or binding not in (STB_GLOBAL, STB_WEAK):
                continue
            if s.shndx == SHN_UNDEF:
                undefined.add(s.name)
            else:                       # functions, and variables (typed STT_CUDA_OBJECT by nvcc)
                defined.add(s.name)
                if binding == STB_WEAK:
                    weak.add(s.name)
        return LinkSymbols(frozenset(defined), frozenset(weak), frozenset(undefined - defined))

    @functools.cached_property
    def kernel_names(self) -> tuple[str, ...]:
        """Kernels: FUNC symbols with STO_CUDA_ENTRY, in symbol-table order."""
        return tuple(s.name for s in self.symbols if s.is_kernel)

    @functools.cached_property
    def device_functions(self) -> tuple[str, ...]:
        """Non-kernel functions that have their own ``.nv.info.<name>`` (``-rdc`` device functions)."""
        return tuple(s.name for s in self.symbols
                     if s.type == STT_FUNC and not s.is_kernel and s.shndx != SHN_UNDEF
                     and (".nv.info." + s.name) in self._section_index)

    @functools.cached_property
    def variables(self) -> tuple[DeviceVariable, ...]:
        """``__device__`` (``.nv.global*``) and ``__constant__`` (``.nv.constant<N>``) variables."""
        out = []
        for s in self.symbols:
            if s.type != STT_OBJECT or not 0 < s.shndx < len(self._sections):
                continue
            section = self._sections[s.shndx].name
            if section.startswith(".nv.global"):
                kind = "device"
            elif section.startswith(".nv.constant") and not section.startswith(".nv.constant0"):
                kind = "constant"
            else:
                continue
            out.append(DeviceVariable(s.name, s.size, kind, section))
        return tuple(out)

    # ---- .nv.info ---------------------------------------------------------------------------

    def nv_info(self, kernel: str | None = None) -> list[NvInfoRecord]:
        """Records of the global ``.nv.info`` (``kernel=None``) or of ``.nv.info.<kernel>``."""
        name = ".nv.info" if kernel is None else ".nv.info." + kernel
        index = self._section_index.get(name)
        if index is None:
            return []
        return parse_records(self._section_data(index), f"{self.origin} section {name}")

    @functools.cached_property
    def _global_info(self) -> dict[int, dict[int, int]]:
        """Per symbol index: {attribute: value} from the ``{u32 sym, u32 value}`` records of ``.nv.info``."""
        out: dict[int, dict[int, int]] = {}
        for r in self.nv_info():
            if r.format == EIFormat.SVAL and r.data is not None and len(r.data) == 8:
                sym, value = _U32X2.unpack(r.data)
                out.setdefault(sym, {})[r.attribute] = value
        return out

    # ---- kernels ----------------------------------------------------------------------------

    def has_kernel(self, name: str) -> bool:
        sym = self._symbols_by_name.get(name)
        return sym is not None and sym.is_kernel

    def kernel(self, name: str) -> KernelLayout:
        """The layout of kernel ``name``, parsed on first use and cached."""
        layout = self._kernels.get(name)
        if layout is None:
            if not self.has_kernel(name):
                raise KernelNotFoundError(f"{self.origin}: no kernel {name!r} in this sm_{self.arch} cubin "
                                          f"(kernels: {', '.join(self.kernel_names) or 'none'})")
            layout = self._kernels[name] = self._parse_kernel(self._symbols_by_name[name])
        return layout

    def kernels(self) -> list[KernelLayout]:
        return [self.kernel(n) for n in self.kernel_names]

    def _parse_kernel(self, sym: Symbol) -> KernelLayout:
        where = f"{self.origin} kernel {sym.name}"
        records = self.nv_info(sym.name)
        params: dict[int, KernelParam] = {}
        v1 = v2 = False
        param_size = None
        param_base = None
        max_threads = reqntid = max_registers = None
        pointer_known = self.arch >= 100
        for r in records:
            attr, data = r.attribute, r.data
            if attr == EIAttr.KPARAM_INFO and data is not None:
                _need(len(data) == _KPARAM.size, where, r)
                _, ordinal, offset, bits = _KPARAM.unpack(data)
                space = (bits >> 8) & 0xF
                size = (bits >> 18) & 0x3FFF
                params[ordinal] = KernelParam(ordinal, offset, size,
                                              _pointer(space, size, pointer_known))
                v1 = True
            elif attr == EIAttr.KPARAM_INFO_V2 and data is not None:
                _need(len(data) == _KPARAM_V2.size, where, r)
                _, ordinal, offset, size, attrs = _KPARAM_V2.unpack(data)
                params[ordinal] = KernelParam(ordinal, offset, size,
                                              _pointer((attrs >> 8) & 0xF, size, pointer_known))
                v2 = True
            elif attr == EIAttr.CBANK_PARAM_SIZE and r.value is not None:
                param_size = r.value
            elif attr == EIAttr.PARAM_CBANK and data is not None:
                _need(len(data) == _PARAM_CBANK.size, where, r)
                _, param_base, cbank_size = _PARAM_CBANK.unpack(data)
                if param_size is None:
                    param_size = cbank_size
            elif attr == EIAttr.MAX_THREADS and data is not None:
                _need(len(data) == _U32X3.size, where, r)
                max_threads = _U32X3.unpack(data)
            elif attr == EIAttr.REQNTID and data is not None:
                _need(len(data) == _U32X3.size, where, r)
                reqntid = _U32X3.unpack(data)
            elif attr == EIAttr.MAXREG_COUNT and r.value is not None:
                max_registers = r.value
        if v1 and v2:
            raise CubinError(f"{where}: has both KPARAM_INFO and KPARAM_INFO_V2 records; the cubin is corrupt")
        ordered = tuple(params[o] for o in sorted(params))
        if [p.ordinal for p in ordered] != list(range(len(ordered))):
            raise CubinError(f"{where}: parameter ordinals {[p.ordinal for p in ordered]} have gaps; "
                             f"the .nv.info section is corrupt")
        end = max((p.offset + p.size for p in ordered), default=0)
        if param_size is None:
            param_size = end
        elif end > param_size:
            raise CubinError(f"{where}: parameters end at byte {end} but CBANK_PARAM_SIZE is {param_size}")
        globals_ = self._global_info.get(sym.index, {})
        registers = globals_.get(EIAttr.REGCOUNT)
        if registers is None and self.elf_type in ("ET_EXEC", 2) and 0 < sym.shndx < len(self._sections):
            registers = self._sections[sym.shndx]["sh_info"] >> 24
        shared_index = self._section_index.get(".nv.shared." + sym.name)
        shared = self._sections[shared_index]["sh_size"] if shared_index is not None else 0
        return KernelLayout(
            name=sym.name, params=ordered, param_size=param_size, source="cubin", arch=self.arch,
            param_base=param_base, max_threads=max_threads, reqntid=reqntid, registers=registers,
            max_registers=max_registers, shared_static=shared,
            frame_size=globals_.get(EIAttr.FRAME_SIZE), params_v2=v2, records=tuple(records))


def _pointer(space: int, size: int, known: bool) -> bool | None:
    if known:
        return space == PARAM_SPACE_POINTER
    return False if size != 8 else None


def _need(ok: bool, where: str, record: NvInfoRecord) -> None:
    if not ok:
        raise CubinError(f"{where}: {record.name} record has {len(record.data or b'')} bytes, "
                         f"not the expected size; the cubin is corrupt")

"""Fatbin containers and their entries.

A :class:`Fatbin` is what one ``__fatBinC_Wrapper_t`` denotes: one container
(``fatBinaryHeader`` plus entries) and, for a version-2 wrapper, the prelinked
containers of each ``-rdc`` translation unit. Nothing is walked, decompressed
or parsed until it is asked for, and everything is cached once it is.
"""
from __future__ import annotations

import functools
import hashlib
import logging
import struct
from dataclasses import dataclass
from typing import Iterator, Sequence

from .compression import MAX_IMAGE_SIZE, decompress
from .cubin import Cubin
from .errors import (FatbinError, FormatError, KernelNotFoundError, NoImageError, PtxError,
                     TruncatedError)
from .format import (CONTAINER_MAGIC, CONTAINER_STRUCT, ENTRY_MIN_HEADER, ENTRY_STRUCT,
                     OPTIONS_DESCRIPTOR, WRAPPER_MAGIC, WRAPPER_STRUCT, WRAPPER_VERSION_LINKED,
                     WRAPPER_VERSION_PLAIN, Compression, ContainerHeader, EntryFlag, EntryHeader,
                     EntryKind, WrapperHeader, compression_of, flag_names)
from .layout import KernelLayout
from .memory import ProcessMemory, process_memory
from .ptx import PtxModule

log = logging.getLogger(__name__)

#: Most prelinked containers a version-2 wrapper may list (a NULL-terminated array).
MAX_PRELINKED = 1 << 16
_U64 = struct.Struct("<Q")


@dataclass(frozen=True)
class Wrapper:
    """A ``__fatBinC_Wrapper_t``, where it was found, and where its pointers lead."""
    header: WrapperHeader
    #: address in the process (from memory) or link-time address (from a file), if known
    address: int | None = None
    #: where it sits, for messages: ``.nvFatBinSegment[1]`` or ``libfoo.so+0x50a8``
    location: str = ""
    #: version 2: the containers the NULL-terminated prelinked array points at
    prelinked_addresses: tuple[int, ...] = ()

    @property
    def version(self) -> int:
        return self.header.version

    def as_dict(self) -> dict:
        return {"location": self.location, "version": self.header.version,
                "address": self.address, "data": self.header.data,
                "filename_or_fatbins": self.header.filename_or_fatbins,
                "prelinked": list(self.prelinked_addresses)}


def _byte_view(data: bytes | bytearray | memoryview) -> memoryview:
    view = data if isinstance(data, memoryview) else memoryview(data)
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


def parse_wrapper(raw: bytes | memoryview, where: str) -> WrapperHeader:
    if len(raw) < WRAPPER_STRUCT.size:
        raise TruncatedError(f"{where}: {len(raw)} bytes, a fatbin wrapper needs {WRAPPER_STRUCT.size}")
    header = WrapperHeader(*WRAPPER_STRUCT.unpack_from(raw, 0))
    if header.magic != WRAPPER_MAGIC:
        raise FormatError(f"{where}: magic 0x{header.magic:08x} is not a fatbin wrapper's "
                          f"(0x{WRAPPER_MAGIC:08x}); the pointer does not point at __fatDeviceText")
    if header.version not in (WRAPPER_VERSION_PLAIN, WRAPPER_VERSION_LINKED):
        raise FormatError(f"{where}: fatbin wrapper version {header.version} is unknown "
                          f"(1 and 2 exist); rebuild with CUDA 13 nvcc")
    return header


def parse_container_header(raw: bytes | memoryview, offset: int, where: str) -> ContainerHeader:
    if len(raw) - offset < CONTAINER_STRUCT.size:
        raise TruncatedError(f"{where}: {len(raw) - offset} bytes left, a fatbin container header "
                             f"needs {CONTAINER_STRUCT.size}")
    h = ContainerHeader(*CONTAINER_STRUCT.unpack_from(raw, offset))
    if h.magic != CONTAINER_MAGIC:
        raise FormatError(f"{where}: magic 0x{h.magic:08x} is not a fatbin container's "
                          f"(0x{CONTAINER_MAGIC:08x})")
    if h.header_size < CONTAINER_STRUCT.size:
        raise FormatError(f"{where}: container header size {h.header_size} is below "
                          f"{CONTAINER_STRUCT.size}")
    if h.fat_size > MAX_IMAGE_SIZE * 4:
        raise FormatError(f"{where}: container claims {h.fat_size} bytes; the fatbin is corrupt")
    return h


class FatbinEntry:
    """One image in a container: a cubin (ELF), PTX text or LTO-IR."""

    def __init__(self, fatbin: "Fatbin", index: int, offset: int, header: EntryHeader,
                 stored: memoryview, extension: bytes):
        self.fatbin = fatbin
        self.index = index
        #: offset of the entry header from the start of the container
        self.offset = offset
        #: every header field, as stored
        self.header = header
        self._stored = stored
        self._extension = extension      # header bytes from 64 to header_size

    # -- header fields, under the names users look for --

    @property
    def kind(self) -> EntryKind | int:
        try:
            return EntryKind(self.header.kind)
        except ValueError:
            return self.header.kind

    @property
    def kind_name(self) -> str:
        k = self.kind
        return k.name if isinstance(k, EntryKind) else f"kind{k}"

    @property
    def is_elf(self) -> bool:
        return self.header.kind == EntryKind.ELF

    @property
    def is_ptx(self) -> bool:
        return self.header.kind == EntryKind.PTX

    @property
    def is_ltoir(self) -> bool:
        return self.header.kind == EntryKind.LTOIR

    @property
    def arch(self) -> int:
        return self.header.arch

    @property
    def arch_name(self) -> str:
        """``sm_90a``, ``compute_75``, ``lto_100f`` ..."""
        prefix = {EntryKind.PTX: "compute", EntryKind.LTOIR: "lto"}.get(self.kind, "sm")
        suffix = ("a" if self.flags & EntryFlag.ARCH_SPECIFIC else
                  "f" if self.flags & EntryFlag.FAMILY_SPECIFIC else "")
        return f"{prefix}_{self.header.arch}{suffix}"

    @property
    def flags(self) -> int:
        return self.header.flags

    @property
    def flag_names(self) -> list[str]:
        return flag_names(self.header.flags)

    @property
    def compression(self) -> Compression:
        c = compression_of(self.header.flags)
        if c is None:
            raise FormatError(f"{self.describe()}: flags 0x{self.flags:x} name more than one compression")
        return c

    @property
    def stored_size(self) -> int:
        return self.header.payload_size

    @property
    def size(self) -> int:
        """Size of the payload after decompression (as the header states it)."""
        if self.compression is Compression.NONE:
            return self.header.payload_size
        return self.header.uncompressed_size

    @property
    def name(self) -> str | None:
        """The identifier (``--ident``, or the source file with ``-G``/``-lineinfo``)."""
        h = self.header
        if not h.name_offset:
            return None
        raw = self._header_bytes(h.name_offset, h.name_len, "name")
        return raw.decode("utf-8", "replace")

    @property
    def options(self) -> str | bytes | None:
        """Compiler options (text), or binary capability data on sm_100+ ELF (bytes)."""
        h = self.header
        if not h.options_offset:
            return None
        desc = self._header_bytes(h.options_offset, OPTIONS_DESCRIPTOR.size, "options descriptor")
        str_off, str_len = OPTIONS_DESCRIPTOR.unpack(desc)
        if str_len == 0:
            return b"" if self.flags & EntryFlag.BINARY_OPTIONS else ""
        raw = self._header_bytes(str_off, str_len, "options")
        if self.flags & EntryFlag.BINARY_OPTIONS:
            return raw
        return raw.rstrip(b"\0").decode("utf-8", "replace")

    def _header_bytes(self, offset: int, length: int, what: str) -> bytes:
        start = offset - ENTRY_MIN_HEADER
        if offset < ENTRY_MIN_HEADER or start + length > len(self._extension):
            raise FormatError(f"{self.describe()}: {what} at offset {offset} (+{length}) lies outside "
                              f"the {self.header.header_size}-byte entry header")
        return bytes(self._extension[start:start + length])

    def describe(self) -> str:
        """``entry 1 (PTX compute_75, zstd) of libfoo.so:.nv_fatbin+0x5f8``, for messages."""
        c = compression_of(self.header.flags)
        comp = c.value if c is not None else "bad-compression-flags"
        return f"entry {self.index} ({self.kind_name} {self.arch_name}, {comp}) of {self.fatbin.origin}"

    # -- payload, decoded on first use --

    @property
    def stored(self) -> memoryview:
        """The payload bytes as stored (compressed, zero padded to 8)."""
        return self._stored

    @functools.cached_property
    def payload(self) -> bytes:
        """The image: decompressed; for PTX the text plus its NUL. LTO-IR is not decoded."""
        if self.is_ltoir:
            raise FatbinError(f"{self.describe()}: LTO-IR is obfuscated before compression and is not "
                              f"decoded; use the stored bytes, or build with code=sm_XX/compute_XX")
        comp = self.compression
        if comp is Compression.NONE:
            data = bytes(self._stored)
        else:
            n = self.header.compressed_size
            if n > len(self._stored):
                raise FormatError(f"{self.describe()}: compressed size {n} exceeds the "
                                  f"{len(self._stored)} bytes stored")
            data = decompress(self._stored[:n], comp, self.header.uncompressed_size, self.describe)
        if self.is_ptx:
            end = data.find(b"\0")
            if end < 0:
                raise PtxError(f"{self.describe()}: PTX text has no terminating NUL; the image is corrupt")
            if end != len(data) - 1:
                data = data[:end + 1]
        if log.isEnabledFor(logging.DEBUG):
            log.debug("decoded %s: %d bytes", self.describe(), len(data))
        return data

    @functools.cached_property
    def ptx_text(self) -> str:
        if not self.is_ptx:
            raise FatbinError(f"{self.describe()} is not PTX")
        return self.ptx.text

    @functools.cached_property
    def ptx(self) -> PtxModule:
        if not self.is_ptx:
            raise FatbinError(f"{self.describe()} is not PTX")
        return PtxModule.from_bytes(self.payload, self.describe())

    @functools.cached_property
    def cubin(self) -> Cubin:
        if not self.is_elf:
            raise FatbinError(f"{self.describe()} is not a cubin")
        cubin = Cubin(self.payload, self.describe())
        if cubin.arch != self.arch:
            log.warning("%s: cubin e_flags say sm_%d, the entry header sm_%d", self.describe(),
                        cubin.arch, self.arch)
        return cubin

    def as_dict(self) -> dict:
        h = self.header
        comp = compression_of(h.flags)
        return {"index": self.index, "offset": self.offset, "kind": self.kind_name,
                "arch": h.arch, "arch_name": self.arch_name,
                "compression": comp.value if comp else None, "flags": self.flag_names,
                "header": h._asdict(), "name": self.name,
                "options": (self.options.hex() if isinstance(self.options, bytes) else self.options)}

    def __repr__(self) -> str:
        return f"<FatbinEntry {self.describe()}>"


class Fatbin:
    """A fatbin container (and, from a version-2 wrapper, its prelinked containers)."""

    def __init__(self, data: bytes | bytearray | memoryview, *, origin: str = "<fatbin>",
                 offset: int = 0, wrapper: Wrapper | None = None,
                 prelinked: Sequence["Fatbin"] = (), section: str | None = None):
        buf = _byte_view(data)
        self.origin = origin
        self.header = parse_container_header(buf, offset, origin)
        total = self.header.header_size + self.header.fat_size
        if total > len(buf) - offset:
            raise TruncatedError(f"{origin}: container claims {total} bytes, only {len(buf) - offset} "
                                 f"are there; the fatbin is truncated")
        self._image = buf[offset:offset + total]
        self.wrapper = wrapper
        self.prelinked: tuple[Fatbin, ...] = tuple(prelinked)
        #: section of the host ELF the container came from, if any
        self.section = section
        self.section_offset = offset if section else None
        #: False for wrappers nvcc's start-up code never passes to __cudaRegisterFatBinary
        self.registered: bool | None = None
        self._kernel_cache: dict[tuple[str, int | None], KernelLayout] = {}

    # -- constructors --

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview, origin: str = "<bytes>") -> "Fatbin":
        """One container at the start of ``data``."""
        return cls(data, origin=origin)

    @classmethod
    def from_file(cls, path: str) -> "Fatbin":
        """A raw ``.fatbin`` file holding one container (see :func:`find_device_code` for the rest)."""
        with open(path, "rb") as f:
            return cls(f.read(), origin=path)

    @classmethod
    def from_wrapper_address(cls, address: int, memory: ProcessMemory | None = None) -> "Fatbin":
        """The fatbin a ``__fatBinC_Wrapper_t *`` in this process denotes (what
        ``__cudaRegisterFatBinary`` receives). Reads headers only; the images stay in place."""
        mem = memory or process_memory()
        location = mem.describe(address) if address > 0 else f"0x{address:x}"
        where = f"fatbin wrapper at {location}"
        header = parse_wrapper(mem.read(address, WRAPPER_STRUCT.size, where), where)
        prelinked_addresses: list[int] = []
        if header.version == WRAPPER_VERSION_LINKED and header.filename_or_fatbins:
            array = header.filename_or_fatbins
            for i in range(MAX_PRELINKED + 1):
                if i == MAX_PRELINKED:
                    raise FormatError(f"{where}: prelinked fatbin array has no NULL within "
                                      f"{MAX_PRELINKED} entries; the wrapper is corrupt")
                (ptr,) = _U64.unpack(mem.read(array + 8 * i, 8, f"{where}: prelinked[{i}]"))
                if not ptr:
                    break
                prelinked_addresses.append(ptr)
        wrapper = Wrapper(header, address, location, tuple(prelinked_addresses))
        prelinked = [cls._from_address(mem, p, f"prelinked[{i}] at {mem.describe(p)}")
                     for i, p in enumerate(prelinked_addresses)]
        fatbin = cls._from_address(mem, header.data, f"fatbin at {mem.describe(header.data)}",
                                   wrapper=wrapper, prelinked=prelinked)
        fatbin.registered = True
        return fatbin

    @classmethod
    def _from_address(cls, mem: ProcessMemory, address: int, where: str, **kw) -> "Fatbin":
        head = mem.read(address, CONTAINER_STRUCT.size, where)
        h = parse_container_header(head, 0, where)
        view = mem.view(address, h.header_size + h.fat_size, where)
        return cls(view, origin=where, **kw)

    # -- the container --

    @property
    def image(self) -> memoryview:
        """The container's bytes (header and entries), as the server receives them."""
        return self._image

    @property
    def size(self) -> int:
        return len(self._image)

    @functools.cached_property
    def digest(self) -> str:
        """SHA-256 of :attr:`image`, hex: the content address the server keys modules by."""
        return hashlib.sha256(self._image).hexdigest()

    @functools.cached_property
    def entries(self) -> tuple[FatbinEntry, ...]:
        """The entries of this container, walked by each header's own size."""
        buf = self._image
        pos = self.header.header_size
        end = len(buf)
        out = []
        while pos < end:
            index = len(out)
            where = f"entry {index} at offset 0x{pos:x} of {self.origin}"
            if end - pos < ENTRY_MIN_HEADER:
                if not any(buf[pos:end]):
                    break           # zero padding after the last entry
                raise TruncatedError(f"{where}: {end - pos} bytes left, an entry header needs "
                                     f"{ENTRY_MIN_HEADER}; the fatbin is truncated")
            h = EntryHeader(*ENTRY_STRUCT.unpack_from(buf, pos))
            if h.header_size < ENTRY_MIN_HEADER:
                raise FormatError(f"{where}: header size {h.header_size} is below {ENTRY_MIN_HEADER}; "
                                  f"the fatbin is corrupt")
            if h.header_size > end - pos or h.payload_size > end - pos - h.header_size:
                raise TruncatedError(f"{where}: header ({h.header_size}) plus payload ({h.payload_size}) "
                                     f"run past the container's end ({end - pos} bytes left); "
                                     f"the fatbin is truncated or the sizes are wrong")
            if compression_of(h.flags) not in (None, Compression.NONE):
                if h.compressed_size > h.payload_size or not h.compressed_size:
                    raise FormatError(f"{where}: compressed size {h.compressed_size} does not fit the "
                                      f"{h.payload_size} bytes stored")
            ext = bytes(buf[pos + ENTRY_MIN_HEADER:pos + h.header_size])
            stored = buf[pos + h.header_size:pos + h.header_size + h.payload_size]
            out.append(FatbinEntry(self, index, pos, h, stored, ext))
            pos += h.header_size + h.payload_size
        return tuple(out)

    def all_entries(self) -> Iterator[FatbinEntry]:
        """This container's entries, then those of each prelinked container."""
        yield from self.entries
        for p in self.prelinked:
            yield from p.entries

    # -- choosing images --

    def select_image(self, arch: int) -> FatbinEntry:
        """The image to load on an sm_``arch`` device: a cubin for that arch, else a compatible
        cubin (same major version, not newer, not arch-specific), else the newest PTX not newer
        than the device. Raises :class:`NoImageError`."""
        entries = self.entries
        for e in entries:
            if e.is_elf and e.arch == arch:
                return e
        compatible = [e for e in entries if e.is_elf and e.arch // 10 == arch // 10 and e.arch < arch
                      and not e.flags & EntryFlag.ARCH_SPECIFIC]
        if compatible:
            return max(compatible, key=lambda e: e.arch)
        ptx = [e for e in entries if e.is_ptx and e.arch <= arch
               and (e.arch == arch or not e.flags & (EntryFlag.ARCH_SPECIFIC | EntryFlag.FAMILY_SPECIFIC))]
        if ptx:
            return max(ptx, key=lambda e: e.arch)
        have = ", ".join(e.arch_name for e in entries) or "no images"
        raise NoImageError(f"{self.origin}: nothing runs on sm_{arch} (has {have}); rebuild with "
                           f"-gencode arch=compute_{arch},code=sm_{arch} or keep PTX "
                           f"(-gencode arch=compute_XX,code=compute_XX with XX <= {arch})")

    def ptx_sources(self) -> list[str]:
        """The text of every PTX entry, this container's first, then each prelinked one's."""
        return [e.ptx_text for e in self.all_entries() if e.is_ptx]

    # -- kernels --

    def kernel(self, name: str, arch: int | None = None) -> KernelLayout:
        """Layout of kernel ``name``, from the cubin for ``arch`` where there is one, else any
        cubin, else PTX; the prelinked containers are searched after this one. Parsed on first
        use, cached."""
        key = (name, arch)
        layout = self._kernel_cache.get(key)
        if layout is not None:
            return layout
        entries = list(self.all_entries())
        elf = [e for e in entries if e.is_elf]
        if arch is not None:
            try:
                first = self.select_image(arch)
            except NoImageError:
                first = None
            if first is not None:
                elf = ([first] if first.is_elf else []) + [e for e in elf if e is not first]
        for e in elf:
            if e.cubin.has_kernel(name):
                layout = e.cubin.kernel(name)
                break
        else:
            for e in entries:
                if e.is_ptx and e.ptx.has_kernel(name):
                    layout = e.ptx.kernel(name)
                    break
            else:
                raise KernelNotFoundError(
                    f"{self.origin}: no kernel {name!r} in any cubin or PTX of this fatbin "
                    f"({len(entries)} entries searched); is the kernel in another translation unit "
                    f"or library?")
        self._kernel_cache[key] = layout
        return layout

    def kernel_names(self) -> list[str]:
        """Every kernel name in any image (parses every image)."""
        seen: dict[str, None] = {}
        for e in self.all_entries():
            if e.is_elf:
                seen.update(dict.fromkeys(e.cubin.kernel_names))
            elif e.is_ptx:
                seen.update(dict.fromkeys(e.ptx.entry_names))
        return list(seen)

    def as_dict(self) -> dict:
        return {"origin": self.origin, "section": self.section, "section_offset": self.section_offset,
                "size": self.size, "version": self.header.version, "registered": self.registered,
                "wrapper": self.wrapper.as_dict() if self.wrapper else None,
                "entries": [e.as_dict() for e in self.entries],
                "prelinked": [p.as_dict() for p in self.prelinked]}

    def __repr__(self) -> str:
        return f"<Fatbin {self.origin} {self.size} bytes>"


def iter_containers(data: memoryview, origin: str, section: str | None = None) -> Iterator[Fatbin]:
    """The back-to-back containers of a ``.nv_fatbin``-like section or a raw ``.fatbin`` file."""
    buf = _byte_view(data)
    pos = 0
    while pos < len(buf):
        if not any(buf[pos:pos + 8]):           # 8-byte alignment padding
            pos += 8
            continue
        where = f"{origin}:{section}+0x{pos:x}" if section else f"{origin}+0x{pos:x}"
        fb = Fatbin(buf, origin=where, offset=pos, section=section)
        yield fb
        pos += (fb.size + 7) & ~7

"""Module and library images in the application's memory: what ``cuModuleLoadData`` and the
library loads of both faces read (:func:`read_image`), the kernels an image holds (a library's, for
``cudaLibraryGetKernelCount`` and ``cuLibraryEnumerateKernels``), and the C strings kernel names
are handed out as (``cudaFuncGetName``, ``cuFuncGetName``), which live as long as the process."""
from __future__ import annotations

import ctypes

from cricket.client.driver_face import DriverApiError
from cricket.client.runtime import RUNTIME as rt
from cricket.client.runtime import _read_container, hostmem, join_containers, read_linked_containers
from cricket.cudafacts.curesult import INVALID_IMAGE, INVALID_VALUE
from cricket.cudafacts.fatbin_magic import CONTAINER_MAGIC as FATBIN_MAGIC
from cricket.cudafacts.fatbin_magic import ELF_MAGIC
from cricket.cudafacts.fatbin_magic import MAX_IN_MEMORY as MAX_IMAGE
from cricket.cudafacts.fatbin_magic import WRAPPER_MAGIC as FATBIN_WRAPPER_MAGIC



def _elf_size(addr: int) -> int:
    head = hostmem.read(addr, 64)
    if head[4] != 2:
        raise DriverApiError(INVALID_IMAGE, "a 32-bit ELF image is not a cubin")
    phoff = int.from_bytes(head[0x20:0x28], "little")
    shoff = int.from_bytes(head[0x28:0x30], "little")
    phentsize, phnum = (int.from_bytes(head[o:o + 2], "little") for o in (0x36, 0x38))
    shentsize, shnum = (int.from_bytes(head[o:o + 2], "little") for o in (0x3A, 0x3C))
    size = max(64, phoff + phentsize * phnum, shoff + shentsize * shnum)
    if size > MAX_IMAGE or (shnum and shentsize < 64):
        raise DriverApiError(INVALID_IMAGE, f"ELF image at {addr:#x} has an implausible header")
    for i in range(shnum):
        sh = hostmem.read(addr + shoff + i * shentsize, 64)
        if int.from_bytes(sh[4:8], "little") != 8:       # SHT_NOBITS occupies no file bytes
            end = int.from_bytes(sh[0x18:0x20], "little") + int.from_bytes(sh[0x20:0x28], "little")
            size = max(size, end)
    if size > MAX_IMAGE:
        raise DriverApiError(INVALID_IMAGE, f"ELF image at {addr:#x} declares {size} bytes")
    return size


def read_image(addr: int) -> tuple[bytes, int]:
    """(image bytes, cr_image_kind) of what cuModuleLoadData/cuLibraryLoadData got: a
    ``__fatBinC_Wrapper_t`` (with its ``-rdc`` translation units), a fatbin, a cubin or PTX."""
    from cricket.protocol import gen as P
    K = P.cr_image_kind
    if not addr:
        raise DriverApiError(INVALID_VALUE, "the image pointer is NULL")
    head = hostmem.read(addr, 4)
    magic = int.from_bytes(head, "little")
    if magic == FATBIN_WRAPPER_MAGIC:
        version = hostmem.load_u32(addr + 4)
        parts = [_read_container(hostmem.load_u64(addr + 8))]
        parts += read_linked_containers(hostmem.load_u64(addr + 16) if version == 2 else 0)
        return join_containers(parts), K.CR_IMAGE_FATBIN
    if magic == FATBIN_MAGIC:
        return _read_container(addr), K.CR_IMAGE_FATBIN
    if head == ELF_MAGIC:
        return hostmem.read(addr, _elf_size(addr)), K.CR_IMAGE_CUBIN
    return ctypes.string_at(addr), K.CR_IMAGE_PTX



def kernel_names(image: bytes, kind: int) -> list[str]:
    """``image`` of cricket.x ``cr_image_kind`` ``kind`` (fatbin, cubin or PTX)."""
    from cricket.fatbin import Cubin, Fatbin, PtxModule
    from cricket.protocol import gen as P
    if kind == P.cr_image_kind.CR_IMAGE_CUBIN:
        return list(Cubin(image).kernel_names)
    if kind == P.cr_image_kind.CR_IMAGE_PTX:
        return list(PtxModule(image.rstrip(b"\0").decode(errors="replace")).entry_names)
    return Fatbin.from_bytes(image).kernel_names()


_names: dict[str, ctypes.Array] = {}


def c_name(name: str) -> int:
    """The address of ``name`` as a NUL-terminated C string that is never freed."""
    text = _names.get(name)
    if text is None:
        text = _names[name] = ctypes.create_string_buffer(name.encode(errors="surrogateescape"))
    return ctypes.addressof(text)


def read_library_file(path: bytes, limit: int = 1 << 30) -> ctypes.Array:
    """A library file's bytes in a NUL-terminated buffer (PTX text ends at its NUL); OSError when
    it cannot be read, ValueError when it is larger than ``limit``."""
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path!r} is larger than {limit} bytes")
    return ctypes.create_string_buffer(data, len(data) + 1)


def store_global(module: int, name: str, dptr: int, size_ptr: int, call: str) -> None:
    """Look up variable ``name`` of server module ``module`` and write its address and size to the
    out-pointers that are not NULL (cuModuleGetGlobal, cuLibraryGetGlobal, cudaLibraryGetGlobal)."""
    from cricket.protocol import gen as P
    conn = rt.conn
    g = conn._check(conn._stub.CR_MODULE_GET_GLOBAL(P.cr_get_args(module=module, name=name)),
                    f"{call}({name})").global_
    rt.reserve(g.ptr, g.size)
    if dptr:
        hostmem.store_u64(dptr, g.ptr)
    if size_ptr:
        hostmem.store_u64(size_ptr, g.size)

"""Device code in CUDA binaries: fatbins, cubins, PTX, and kernel parameter layouts.

Public API (everything a client, server or backend needs):

* :class:`Fatbin` -- one container (``from_bytes``, ``from_file``,
  ``from_wrapper_address`` for the pointer ``__cudaRegisterFatBinary`` receives);
  ``entries`` (:class:`FatbinEntry`: ``kind``, ``arch``, ``compression``, every
  header field in ``header``, lazily decompressed ``payload``, ``cubin``, ``ptx``),
  ``prelinked`` (the ``-rdc`` TU containers of a version-2 wrapper),
  ``select_image(arch)``, ``ptx_sources()``, ``kernel(name, arch)``, ``image`` and
  ``digest`` (content address).
* :class:`Cubin` -- ``arch``, ``kernel_names``, ``kernel(name)`` ->
  :class:`KernelLayout`, ``nv_info(kernel)`` records, ``variables``.
* :class:`PtxModule` -- ``entry_names``, ``kernel(name)`` -> :class:`KernelLayout`.
* :func:`find_device_code` -- everything in an executable, ``.so``, ``.o``,
  ``.fatbin`` or ``.cubin``.
* :func:`loaded_fatbins` -- the registered fatbins of every object loaded in this
  process, decoded from memory (for static-cudart applications, whose
  ``__cudaRegisterFatBinary`` cannot be interposed).
* :class:`FatbinError` and its subclasses, whose messages name the entry.

Recipes:

* client, at ``__cudaRegisterFatBinary(wrapper)``: ``fb = Fatbin.from_wrapper_address(wrapper)``;
  send ``fb.image`` keyed by ``fb.digest`` (and each of ``fb.prelinked`` for ``-rdc``);
  at launch ``fb.kernel(name, arch).pack_from_pointers(args)`` gives the parameter buffer.
* server: ``Fatbin.from_bytes(image).select_image(arch).payload`` is the cubin, or the
  NUL-terminated PTX, to hand to ``cuModuleLoadData``.
* emu: ``Fatbin.from_bytes(image).ptx_sources()`` (after attaching the prelinked
  containers: ``Fatbin(image, prelinked=[Fatbin(p) for p in prelinked_images])``).

Registration is lazy: constructing a :class:`Fatbin` reads 16 bytes (40 from a
wrapper); entries are walked, payloads decompressed and cubins parsed on first
use, and each kernel's layout is cached. Caches are per object and safe to share
between threads (a race at worst decodes the same image twice).
"""
from __future__ import annotations

from .compression import MAX_IMAGE_SIZE
from .container import Fatbin, FatbinEntry, Wrapper, iter_containers
from .cubin import Cubin, DeviceVariable, arch_from_e_flags
from .eiattr import EIAttr, NvInfoRecord
from .errors import (CubinError, DecompressionError, FatbinError, FormatError, KernelNotFoundError,
                     MemoryAccessError, NoImageError, PtxError, TruncatedError)
from .format import Compression, EntryFlag, EntryHeader, EntryKind
from .hostelf import DeviceCode, find_device_code
from .layout import KernelLayout, KernelParam
from .memory import ProcessMemory
from .printf import image_calls_printf
from .process import loaded_fatbins
from .ptx import PtxModule

__all__ = [
    "Fatbin", "FatbinEntry", "Wrapper", "iter_containers", "Cubin", "DeviceVariable",
    "arch_from_e_flags", "EIAttr", "NvInfoRecord", "PtxModule", "KernelLayout", "KernelParam",
    "DeviceCode", "find_device_code", "loaded_fatbins", "ProcessMemory", "Compression", "EntryFlag", "EntryHeader",
    "EntryKind", "MAX_IMAGE_SIZE", "image_calls_printf",
    "FatbinError", "FormatError", "TruncatedError", "DecompressionError", "CubinError", "PtxError",
    "MemoryAccessError", "NoImageError", "KernelNotFoundError",
]

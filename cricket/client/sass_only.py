"""Kernels of images that hold no PTX, refused at the launch on a PTX-only backend: fatbins
registered with the runtime API and modules loaded through the driver API (``cuModuleLoadData``,
``cuLibraryLoadData``: what cuBLAS's own static cudart does).

PyTorch's ``libtorch_cuda.so`` (like many prebuilt libraries) ships SASS for a list of GPU
architectures and no PTX. The emu backend executes PTX only, so such a kernel can never run there:
the launch itself fails with ``cudaErrorNoKernelImageForDevice``, as NVIDIA's runtime fails a
launch on a GPU the library was not built for, and the message names the kernel, the library and
what to do (a GPU server), instead of an asynchronous error at a later synchronisation.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Any

from cricket.cudafacts.cudart_errors import CODES

# cricket.fatbin (pyelftools, zstandard) is imported at the first image read: the driver face
# imports this module, and programs whose kernels all run should not load it.
log = logging.getLogger(__name__)

#: backends that execute PTX only
PTX_ONLY_BACKENDS = frozenset({"emu"})
NO_KERNEL_IMAGE = CODES["cudaErrorNoKernelImageForDevice"]

# fatbin handle -> (its registration, why its kernels cannot run or None); the registration is
# compared, as a handle is reused after __cudaUnregisterFatBinary
_verdicts: dict[int, tuple[Any, str | None]] = {}
_lock = threading.Lock()


def library_of(address: int, unknown: str = "the program") -> str:
    """The file mapped at ``address`` in this process (the library that registered a fatbin or
    loaded a module); ``unknown`` for memory no file backs."""
    from cricket.fatbin.memory import read_maps
    for m in read_maps():
        if m.start <= address < m.end and m.path.startswith("/"):
            return m.path
    return unknown


def _summary(entries: Iterable[Any]) -> tuple[bool, list[int]]:
    """(holds PTX, SASS architectures) of fatbin entries."""
    entries = list(entries)
    return any(e.is_ptx for e in entries), sorted({e.arch for e in entries if e.is_elf})


def _why(backend: str, origin: str, archs: list[int]) -> str:
    listed = ", ".join(f"sm_{a}" for a in archs) or "no architecture"
    return (f"{origin} ships no PTX for this kernel (only SASS for {listed}), "
            f"and the {backend} backend executes PTX only: run it on a GPU server "
            f"(`cricket server --backend cuda` on a machine with a GPU, then "
            f"`cricket run --server HOST:PORT -- ...`)")


def refusal(backend: str, entry: Any) -> str | None:
    """Why kernels of the registered fatbin ``entry`` (``runtime_api.RegisteredFatbin``) cannot
    run on ``backend``; None when they may. Decided once per registration, from the headers."""
    if backend not in PTX_ONLY_BACKENDS or entry.image is None or entry.wrapper_version == 2:
        return None                     # -rdc (version 2): PTX may sit in the linked containers
    known = _verdicts.get(entry.handle)
    if known is not None and known[0] is entry:
        return known[1]
    from cricket.fatbin.container import Fatbin
    from cricket.fatbin.errors import FatbinError
    with _lock:
        try:
            has_ptx, archs = _summary(Fatbin.from_bytes(entry.image).all_entries())    # headers only
        except FatbinError:
            has_ptx, archs = True, []   # unreadable here: the server's load says what is wrong
        why = None if has_ptx else _why(backend, library_of(entry.wrapper), archs)
        _verdicts[entry.handle] = (entry, why)
    return why


# driver-API module handle -> why its kernels cannot run; only refused modules (handles are
# never reused, so an unloaded module's entry is harmless)
refused_modules: dict[int, str] = {}


def module_loaded(backend: str, handle: int, image: bytes, kind: int, address: int) -> None:
    """Note a module loaded through the driver API (an image of cr_image_kind ``kind``, read
    from ``address``) whose kernels cannot run on ``backend``; headers only."""
    if backend not in PTX_ONLY_BACKENDS:
        return
    from cricket.protocol import gen as P
    K = P.cr_image_kind
    if kind == K.CR_IMAGE_PTX:
        return
    from cricket.fatbin.container import iter_containers
    from cricket.fatbin.cubin import Cubin
    from cricket.fatbin.errors import FatbinError
    try:
        if kind == K.CR_IMAGE_CUBIN:
            has_ptx, archs = False, [Cubin(image).arch]
        else:
            has_ptx, archs = _summary(e for fb in iter_containers(memoryview(image), "module")
                                      for e in fb.all_entries())
    except FatbinError:
        return                          # unreadable here: the server's load says what is wrong
    if not has_ptx:
        refused_modules[handle] = _why(backend, library_of(address, "the module image"), archs)


_reported: set[str] = set()


def _refuse(kernel: str, why: str, code_name: str) -> None:
    from cricket.client.errors import CudaRuntimeError
    message = f"kernel {kernel}: {why}"
    if kernel not in _reported:
        _reported.add(kernel)
        log.error("%s: %s", code_name, message)
    raise CudaRuntimeError(NO_KERNEL_IMAGE, message)


def check_launchable(backend: str, entry: Any, kernel: str) -> None:
    """Raise ``CudaRuntimeError(cudaErrorNoKernelImageForDevice)`` when ``kernel`` of ``entry``
    cannot run on ``backend``; the first time for each kernel, log why."""
    why = refusal(backend, entry)
    if why is not None:
        _refuse(kernel, why, "cudaErrorNoKernelImageForDevice")


def check_module_launch(module: int, kernel: str) -> None:
    """The driver API's launch of ``kernel`` from ``module``: CUDA_ERROR_NO_BINARY_FOR_GPU (the
    same number) when the module was refused by :func:`module_loaded`."""
    why = refused_modules.get(module)
    if why is not None:
        _refuse(kernel, why, "CUDA_ERROR_NO_BINARY_FOR_GPU")

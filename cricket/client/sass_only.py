"""Kernels of registered fatbins that hold no PTX, refused at the launch on a PTX-only backend.

PyTorch's ``libtorch_cuda.so`` (like many prebuilt libraries) ships SASS for a list of GPU
architectures and no PTX. The emu backend executes PTX only, so such a kernel can never run there:
the launch itself fails with ``cudaErrorNoKernelImageForDevice``, as NVIDIA's runtime fails a
launch on a GPU the library was not built for, and the message names the kernel, the library and
what to do (a GPU server), instead of an asynchronous error at a later synchronisation.
"""
from __future__ import annotations

import logging
import threading
from typing import Any

from cricket.cudafacts.cudart_errors import CODES
from cricket.fatbin.container import Fatbin
from cricket.fatbin.errors import FatbinError
from cricket.fatbin.memory import read_maps

log = logging.getLogger(__name__)

#: backends that execute PTX only
PTX_ONLY_BACKENDS = frozenset({"emu"})
NO_KERNEL_IMAGE = CODES["cudaErrorNoKernelImageForDevice"]

# fatbin handle -> (its registration, why its kernels cannot run or None); the registration is
# compared, as a handle is reused after __cudaUnregisterFatBinary
_verdicts: dict[int, tuple[Any, str | None]] = {}
_lock = threading.Lock()


def library_of(address: int) -> str:
    """The file mapped at ``address`` in this process (the library that registered a fatbin)."""
    for m in read_maps():
        if m.start <= address < m.end and m.path.startswith("/"):
            return m.path
    return "the program"


def _architectures(image: bytes | memoryview) -> tuple[bool, list[int]]:
    """(holds PTX, SASS architectures) of a registered container image; headers only."""
    fatbin = Fatbin.from_bytes(image)
    entries = list(fatbin.all_entries())
    return any(e.is_ptx for e in entries), sorted({e.arch for e in entries if e.is_elf})


def refusal(backend: str, entry: Any) -> str | None:
    """Why kernels of the registered fatbin ``entry`` (``runtime_api.RegisteredFatbin``) cannot
    run on ``backend``; None when they may. Decided once per registration, from the headers."""
    if backend not in PTX_ONLY_BACKENDS or entry.image is None or entry.wrapper_version == 2:
        return None                     # -rdc (version 2): PTX may sit in the linked containers
    known = _verdicts.get(entry.handle)
    if known is not None and known[0] is entry:
        return known[1]
    with _lock:
        try:
            has_ptx, archs = _architectures(entry.image)
        except FatbinError:
            has_ptx, archs = True, []   # unreadable here: the server's load says what is wrong
        why = None
        if not has_ptx:
            listed = ", ".join(f"sm_{a}" for a in archs) or "no architecture"
            why = (f"{library_of(entry.wrapper)} ships no PTX for this kernel (only SASS for {listed}), "
                   f"and the {backend} backend executes PTX only: run it on a GPU server "
                   f"(`cricket server --backend cuda` on a machine with a GPU, then "
                   f"`cricket run --server HOST:PORT -- ...`)")
        _verdicts[entry.handle] = (entry, why)
    return why


_reported: set[str] = set()


def check_launchable(backend: str, entry: Any, kernel: str) -> None:
    """Raise ``CudaRuntimeError(cudaErrorNoKernelImageForDevice)`` when ``kernel`` of ``entry``
    cannot run on ``backend``; the first time for each kernel, log why."""
    why = refusal(backend, entry)
    if why is None:
        return
    from cricket.client.errors import CudaRuntimeError
    message = f"kernel {kernel}: {why}"
    if kernel not in _reported:
        _reported.add(kernel)
        log.error("cudaErrorNoKernelImageForDevice: %s", message)
    raise CudaRuntimeError(NO_KERNEL_IMAGE, message)

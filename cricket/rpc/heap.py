"""Keep large freed buffers in the process heap (glibc ``mallopt``), so big payloads do not fault.

Every record, opaque and reply of a large copy is a fresh multi-MiB Python object. With glibc's
defaults such a block is either its own ``mmap`` (above the mmap threshold) or carved from the top
of the heap, which ``free`` trims back to the kernel as soon as more than twice that threshold is
unused. Either way the next payload of the same size starts on untouched pages: one page fault and
one page zeroing per 4 KiB, and an ``munmap`` per payload. On TCP loopback that cost, not the
socket, decided the speed of 4-16 MiB copies (16 MiB host → device fell to ~0.3 GB/s).

:func:`keep_large_buffers` raises both thresholds once per process: blocks up to 32 MiB (the most
glibc allows) come from the heap, and up to 512 MiB of freed heap stays mapped for the next payload.
Set ``CRICKET_MALLOC_TUNING=0`` to leave the allocator alone. A no-op off glibc.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys
import threading

from .. import _env

log = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1          # from glibc's <malloc.h>
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20      # glibc refuses more (HEAP_MAX_SIZE / 2 on 64-bit)
TRIM_THRESHOLD = 512 << 20

_lock = threading.Lock()
_state: bool | None = None     # None: not tried yet; else whether the thresholds were set


def keep_large_buffers() -> bool:
    """Raise glibc's mmap and trim thresholds once per process; True when they are in effect."""
    global _state
    if _state is not None:
        return _state
    with _lock:
        if _state is None:
            _state = _apply()
    return _state


def _apply() -> bool:
    if not _env.flag("CRICKET_MALLOC_TUNING"):
        log.debug("CRICKET_MALLOC_TUNING=0: the allocator keeps its defaults")
        return False
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
        gnu = libc.gnu_get_libc_version      # only glibc has both
    except (OSError, AttributeError):
        log.debug("not glibc: large-buffer allocator tuning skipped")
        return False
    del gnu
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # Trim first: setting the mmap threshold alone would still let free() return the heap top.
    ok = mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    if not ok:
        log.warning("mallopt refused the large-buffer thresholds; large copies will be slower")
    else:
        log.debug("malloc: mmap threshold %d, trim threshold %d", MMAP_THRESHOLD, TRIM_THRESHOLD)
    return ok

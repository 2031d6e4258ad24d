"""``emu``: a GPU emulated on the CPU by interpreting PTX with NumPy.

Device memory is host memory (one lazily committed arena); kernels run from the PTX nvcc embeds in
every default build: parsed, linked, calls inlined, each basic block compiled once into NumPy code,
and the threads of many blocks executed together as one vector of lanes.

The API (all calls synchronous; every failure is an ``EmuError`` carrying the CUDA driver error code)::

    dev = EmuDevice(printf_sink=None)             # None: device printf goes to stdout
    ptr = dev.mem_alloc(nbytes)                   # device pointer (int), 256-byte aligned
    dev.memcpy_htod(ptr, host_buffer); dev.memcpy_dtoh(ptr, nbytes) -> bytes; dev.memcpy_dtod(dst, src, n)
    dev.memset_d8(ptr, value, count); dev.memset_d16(...); dev.memset_d32(ptr, value, count)
    dev.mem_free(ptr); dev.mem_get_info() -> (free, total)
    mod = dev.load_module([ptx_text, ...])        # several texts: an -rdc=true program, linked here
    fn = mod.get_function("name")                 # fn.param_layout: [(offset, size)], fn.param_size
    ptr, size = mod.get_global("symbol")          # __device__ / __constant__ variables
    dev.launch(fn, grid, block, shared_mem_bytes, param_bytes)   # params at their KPARAM offsets
    dev.synchronize(); dev.device_properties() -> dict; dev.reset(); dev.close()
    dev.last_launch -> {"thread_instructions", "block_steps", "batches", "lanes_per_batch", "seconds"}

``EmuDevice(arena_size=16 GiB, max_lanes=65536, printf_sink=None, sticky_errors=True, max_steps=50M,
launch_timeout=None)``: the arena is reserved, not committed; ``max_lanes`` threads (whole CTAs)
run as one vector; with ``sticky_errors`` a kernel fault poisons the device until ``reset()`` as in
CUDA (a server that keeps sessions apart may prefer ``sticky_errors=False`` and track it per session).

``EmuDevice(..., kernel_workers=KernelWorkers(), split_launches=N)`` (``emu.workers``) runs the
kernels in worker processes of the device's own on a shared arena, a large launch over up to N of
them; ``dev.cancel()`` then stops a running kernel from another thread. Such devices with arenas
at their own device pointers (``arena_base``) may reach each other's memory:
``cricket.backends.emu_devices.enable_peer(dev, peer)`` maps ``peer``'s arena into ``dev``'s
workers (``emu.peer_window``) for its later launches.

``pack_params(fn, *values)`` builds ``param_bytes`` from Python values for callers without a cubin.

Error codes: 700 illegal address, 716 misaligned address, 719 launch failed (trap), 710 assert,
702 launch timeout (a kernel that never finishes), 801 not supported (at module load, naming the
feature), 209 no binary for GPU (launch from a module without PTX, with the rebuild hint), 218
invalid PTX, 500 not found, 1 invalid value. Errors name the kernel, the instruction and, when the
PTX has ``.loc`` lines, the source line.
"""
from __future__ import annotations

from .device import EmuDevice, EmuFunction, EmuModule, pack_params
from .errors import EmuError

__all__ = ["EmuDevice", "EmuFunction", "EmuModule", "EmuError", "pack_params"]

"""The emulated device: memory, modules, launches and properties behind one plain Python API."""
from __future__ import annotations

import hashlib
import logging
import mmap
import struct
import sys
import threading
import time
import weakref
from collections import OrderedDict
from typing import Callable

import numpy as np

from .codegen import CompiledKernel, KernelCompiler, compile_kernel
from .dtypes import NP, STORAGE
from .errors import (CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_LAUNCH_FAILED,
                     CUDA_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_NOT_FOUND, STICKY_CODES, EmuError)
from .call_stack import LOCAL_BUDGET
from .calls import function_address
from .heap import discard_heap, heap_of
from .device_launch import DeviceLaunch, in_run_order, take_launches
from .executor import DEFAULT_MAX_STEPS, SM_COUNT, WARP_SIZE, LaunchConfig, batch_local_bytes, run_kernel
from .memory import DEFAULT_ARENA, GLOBAL_BASE, DeviceArena
from . import cooperative as cooperative_launch
from .ptx.parser import parse
from .ptx.program import KernelIR, Program, decl_size, type_size

log = logging.getLogger(__name__)

DEFAULT_MAX_LANES = 65536
MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIM = (1024, 1024, 64)
MAX_GRID_DIM = (2**31 - 1, 65535, 65535)
SHARED_PER_BLOCK = 48 * 1024
SHARED_PER_BLOCK_OPTIN = 64 * 1024
REBUILD_HINT = ("the module contains no PTX (only SASS{archs}); the emu backend can only execute PTX. Rebuild "
                "with e.g. -arch=sm_75 (= -gencode arch=compute_75,code=[sm_75,compute_75]) or "
                "CMAKE_CUDA_ARCHITECTURES=75 (not 75-real)")

_COMPILED: OrderedDict[tuple[str, str], CompiledKernel] = OrderedDict()
_PROGRAMS: OrderedDict[str, Program] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 512


def compiled_kernel(digest: str, name: str, ir: KernelIR) -> CompiledKernel:
    """The compiled kernel ``name`` of the program ``digest`` (compiled once per process)."""
    key = (digest, name)
    with _CACHE_LOCK:
        ck = _COMPILED.get(key)
        if ck is not None:
            _COMPILED.move_to_end(key)
            return ck
    ck = compile_kernel(ir)
    with _CACHE_LOCK:
        _COMPILED[key] = ck
        while len(_COMPILED) > _CACHE_SIZE:
            _COMPILED.popitem(last=False)
    return ck


def program_digest(texts: list[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(hashlib.sha256(t.encode()).digest())
    return h.hexdigest()


def program_of(texts: list[str], digest: str) -> Program:
    """The linked program of PTX ``texts`` (parsed once per process); EmuError when unsupported."""
    with _CACHE_LOCK:
        prog = _PROGRAMS.get(digest)
    if prog is None:
        prog = Program([parse(t) for t in texts])
        prog.check_supported()
        with _CACHE_LOCK:
            _PROGRAMS[digest] = prog
            while len(_PROGRAMS) > 64:
                _PROGRAMS.popitem(last=False)
    return prog


def _sink_of(sink) -> Callable[[str], None]:
    if sink is None:
        def write(s: str) -> None:
            sys.stdout.write(s)
            sys.stdout.flush()
        return write
    if callable(sink):
        return sink
    if hasattr(sink, "write"):
        return sink.write
    raise TypeError("printf_sink must be a callable taking a str, or an object with write()")


# Registers per thread reported for a kernel: the emulator has no register limit, and the PTX
# register count (often hundreds) would make occupancy queries answer 0 blocks per SM for large
# blocks; 32 per thread lets 2048 threads share an SM's 65536 registers (full occupancy).
REGS_REPORTED = 32


class EmuFunction:
    """A kernel of a loaded module (the emulator's CUfunction)."""

    def __init__(self, module: "EmuModule", name: str, ir: KernelIR | None) -> None:
        self.module = module
        self.name = name
        self.ir = ir

    @property
    def param_layout(self) -> list[tuple[int, int]]:
        """(offset, size) of each parameter in the param buffer ``launch`` expects."""
        return [(p.offset, p.size) for p in self.ir.params] if self.ir else []

    @property
    def param_kinds(self) -> list[int]:
        """What each parameter holds (cricket.x cr_param_kind), from its PTX type."""
        return [p.kind for p in self.ir.params] if self.ir else []

    @property
    def param_size(self) -> int:
        return self.ir.param_size if self.ir else 0

    def attributes(self) -> dict:
        """The values cuFuncGetAttribute would report (emulated).

        ``ptx_version`` is the ``.target`` of the PTX that runs (the emulator runs any PTX target,
        also one newer than the emulated sm_75): CUB's host code picks its tuning policy, and with it
        the block size the kernel was compiled for, from this number."""
        if self.ir is None:
            raise EmuError(CUDA_ERROR_NO_BINARY_FOR_GPU, self.module.no_binary_message())
        ptx_version = self.module.program.target_arch(self.name) or 75
        threads = min(self.module.program.thread_limit(self.name) or MAX_THREADS_PER_BLOCK, MAX_THREADS_PER_BLOCK)
        return {"max_threads_per_block": threads, "shared_size_bytes": self.ir.shared_static,
                "const_size_bytes": 0, "local_size_bytes": self.ir.local_size,
                "num_regs": min(REGS_REPORTED, len(self.ir.regs)), "ptx_version": ptx_version, "binary_version": 75,
                "max_dynamic_shared_size_bytes": SHARED_PER_BLOCK_OPTIN - self.ir.shared_static}

    def compiled(self) -> CompiledKernel:
        return compiled_kernel(self.module.hash, self.name, self.ir)

    def __repr__(self) -> str:
        return f"<EmuFunction {self.name}>"


def local_symbol(name: str, names) -> str | None:
    """``name`` as the linked program has it: itself, or a symbol local to one of several linked
    PTX modules (``name@mK``: a static kernel or variable of an ``-rdc`` translation unit, whose
    name nvcc prefixes with the unit's hash). Should two modules have a local symbol of one name,
    the lowest K is taken: the first container's, which the client sends first (the registering
    unit's fatbin, then the linked units': cricket.client.runtime)."""
    if name in names:
        return name
    local = [n for n in names if n.startswith(name + "@m") and n[len(name) + 2:].isdigit()]
    return min(local, key=lambda n: int(n[len(name) + 2:])) if local else None


class EmuModule:
    """A loaded (and, for several PTX texts, linked) module: kernels plus device variables."""

    def __init__(self, device: "EmuDevice", program: Program | None, digest: str, sass_archs=()) -> None:
        self.device = device
        self.program = program
        self.hash = digest
        self.sass_archs = tuple(sass_archs)
        self.globals: dict[str, tuple[int, int]] = {}
        self.global_addrs = np.zeros(0, dtype=np.uint64)
        self.functions: dict[str, EmuFunction] = {}
        self.sources: list[str] = []          # the PTX texts (a kernel worker process loads them too)
        self.loaded = True
        if program is not None:
            self._place_variables()
            if not program.lazy:                      # a large module: kernels are built on first use
                for name in program.entries:
                    self._build(name)

    def _build(self, name: str) -> EmuFunction:
        ir = self.program.kernel(name)
        with _CACHE_LOCK:
            known = (self.hash, name) in _COMPILED
        if not known:
            KernelCompiler(ir).validate()     # unsupported forms fail here (at load for a small module)
        fn = self.functions[name] = EmuFunction(self, name, ir)
        return fn

    def no_binary_message(self) -> str:
        archs = f" for sm_{','.join(str(a) for a in self.sass_archs)}" if self.sass_archs else ""
        return REBUILD_HINT.format(archs=archs)

    def _place_variables(self) -> None:
        prog = self.program
        arena = self.device.arena
        addrs = []
        for g in prog.device_vars:
            var, _ = prog.variables[g]
            size = max(decl_size(var), 1)
            ptr = arena.alloc(size)
            self.device._module_allocs.add(ptr)
            self.globals[g] = (ptr, decl_size(var))
            addrs.append(ptr)
        self.global_addrs = np.array(addrs, dtype=np.uint64)
        for g in prog.device_vars:
            var, mi = prog.variables[g]
            if var.init:
                arena.write(self.globals[g][0], self._init_bytes(var, mi))

    def _init_bytes(self, var, mi: int) -> bytes:
        """The initial bytes of variable ``var`` of module ``mi`` (names in it are that module's)."""
        t = var.type
        np_t = NP[STORAGE[t]] if t not in ("f16", "bf16") else np.uint16
        vals = []
        for item in var.init:
            if isinstance(item, tuple):
                _, name, off = item
                name = self.program.global_name(mi, name) if name not in self.globals else name
                if name not in self.globals and name in self.program.functions:    # a function pointer
                    vals.append(function_address(self.program, name) + off)
                    continue
                if name not in self.globals:
                    raise EmuError(CUDA_ERROR_NOT_FOUND, f"initialiser of {var.name} refers to unknown {name}")
                vals.append(self.globals[name][0] + off)
            else:
                vals.append(item)
        if t in ("f16",):
            arr = np.array(vals, dtype=np.float16).view(np.uint16)
        elif np.dtype(np_t).kind == "f":
            arr = np.array(vals, dtype=np_t)
        else:
            bits = np.dtype(np_t).itemsize * 8
            arr = np.array([int(v) & ((1 << bits) - 1) for v in vals], dtype=np.uint64).astype(np_t)
        data = arr.tobytes()
        size = decl_size(var)
        return data[:size] + bytes(max(0, size - len(data)))

    def get_function(self, name: str) -> EmuFunction:
        """The kernel ``name`` (mangled name for C++ kernels)."""
        if self.program is None:
            return EmuFunction(self, name, None)
        fn = self.functions.get(name)
        if fn is None:
            found = local_symbol(name, self.program.entries)
            if found is None:
                raise EmuError(CUDA_ERROR_NOT_FOUND, f"no kernel named {name!r} in this module "
                                                     f"(it has: {', '.join(sorted(self.program.entries)) or 'none'})")
            try:
                fn = self._build(found)
            except EmuError as e:
                log.error("kernel %s: %s", name, e)
                raise
            self.functions[name] = fn       # asked again by the same name
        return fn

    def get_global(self, name: str) -> tuple[int, int]:
        """(device pointer, size in bytes) of a ``__device__``/``__constant__`` variable."""
        found = local_symbol(name, self.globals)
        if found is None:
            raise EmuError(CUDA_ERROR_NOT_FOUND, f"no device variable named {name!r} in this module")
        return self.globals[found]

    def unload(self) -> None:
        """Free the module's device variables; its functions must not be launched afterwards."""
        if not self.loaded:
            return
        for ptr, _ in self.globals.values():
            self.device._module_allocs.discard(ptr)
            self.device.arena.free(ptr)
        self.loaded = False


QUICK_THREADS = 256          # see EmuDevice.launch_is_quick
QUICK_INSTRUCTIONS = 256


class EmuDevice:
    """One emulated GPU. All calls are synchronous; kernels run to completion inside ``launch``.

    ``printf_sink``: where device printf output goes (a callable taking str, or a file-like object;
    default stdout). ``max_lanes``: how many threads run as one vector (whole CTAs are batched up to this
    many lanes). With ``sticky_errors`` (as CUDA), a kernel fault makes every later call fail with the
    same error until ``reset()``. A launch that runs more than ``max_steps`` block steps per batch, or
    longer than ``launch_timeout`` seconds, ends with CUDA_ERROR_LAUNCH_TIMEOUT (702).

    With ``kernel_workers`` (a :class:`~.workers.KernelWorkers`) kernels run in a worker process
    of this device's own, on an arena both map; :meth:`cancel` then ends a running kernel at once.
    A launch of many CTAs may then be spread over up to ``split_launches`` such processes.
    """

    def __init__(self, arena_size: int = DEFAULT_ARENA, max_lanes: int = DEFAULT_MAX_LANES, printf_sink=None,
                 sticky_errors: bool = True, max_steps: int = DEFAULT_MAX_STEPS,
                 launch_timeout: float | None = None, kernel_workers=None, split_launches: int = 1,
                 arena_base: int = GLOBAL_BASE) -> None:
        if max_lanes < 1:
            raise EmuError(CUDA_ERROR_INVALID_VALUE, "max_lanes must be at least 1")
        self.arena = DeviceArena(arena_size, shared=kernel_workers is not None, base=arena_base)
        self.remote = None if kernel_workers is None else kernel_workers.remote(self.arena, split_launches)
        self.cancelled = False
        self.max_lanes = max_lanes
        self.sink = _sink_of(printf_sink)
        self.sticky_errors = sticky_errors
        self.max_steps = max_steps
        self.launch_timeout = launch_timeout
        self.sticky: EmuError | None = None
        self._module_allocs: set[int] = set()
        self._modules: weakref.WeakSet = weakref.WeakSet()
        self._lock = threading.RLock()
        # counts of the last launch: thread_instructions, block_steps, batches, lanes_per_batch, seconds
        self.last_launch: dict = {}
        self.launches = 0               # numbers the grids (%gridid)
        self.peers: list[EmuDevice] = []     # devices whose memory this one's kernels may reach

    # ---- errors ------------------------------------------------------------------------------
    def _check(self) -> None:
        if self.sticky is not None:
            raise EmuError(self.sticky.code, f"an earlier kernel failed and the context is unusable until reset: "
                                             f"{self.sticky.message}")

    def reset(self) -> None:
        """Clear a sticky error and free every allocation (as cuDevicePrimaryCtxReset)."""
        with self._lock:
            self.sticky = None
            for ptr in list(self.arena._sizes):
                self.arena.free(self.arena.base + ptr)
            discard_heap(self.arena)
            self._module_allocs.clear()
            for mod in list(self._modules):
                mod.loaded = False                # as after a context reset: load modules again
            self._modules.clear()

    def cancel(self) -> None:
        """End the running kernel (in a worker process) and refuse later launches. Never blocks."""
        self.cancelled = True
        if self.remote is not None:
            self.remote.kill()

    def close(self) -> None:
        if self.remote is not None:
            self.remote.close()
        self.arena.close()

    def resize_arena(self, size: int) -> None:
        """Reserve ``size`` bytes of address space for device memory instead (page-rounded), while
        nothing lives in it yet: a device whose session may hold little reserves little."""
        size = -(-size // mmap.PAGESIZE) * mmap.PAGESIZE
        with self._lock:
            if self.arena.used or self.launches or self._modules:
                raise EmuError(CUDA_ERROR_INVALID_VALUE, "the arena can be resized only before first use")
            arena = DeviceArena(size, shared=self.arena.fd is not None, base=self.arena.base)
            self.arena.close()
            self.arena = arena
            if self.remote is not None:
                self.remote.arena = arena

    def module_bytes(self, module: "EmuModule") -> int:
        """Device memory the module's variables take in the arena."""
        return sum(max(size, 1) for _, size in module.globals.values())

    def launch_is_quick(self, function: EmuFunction, grid, block) -> bool:
        """Whether a launch would end within well under a millisecond in the calling process: a
        compiled kernel of at most ``QUICK_INSTRUCTIONS`` that cannot loop, over at most
        ``QUICK_THREADS`` threads (a caller may then run it where it would not run a kernel)."""
        if (self.remote is None or function.ir is None or self.sticky is not None or self.cancelled
                or self.peers):     # peers' memory is mapped in the kernel workers only
            return False
        with _CACHE_LOCK:
            if (function.module.hash, function.name) not in _COMPILED:
                return False
        try:
            grid, block = _dims(grid, "grid"), _dims(block, "block")
        except EmuError:
            return False
        return self.remote.runs_inline(function, grid, block, QUICK_THREADS, QUICK_INSTRUCTIONS)

    def launch_local_memory(self, function: EmuFunction, grid, block, shared_mem_bytes: int) -> tuple[int, int, int]:
        """(local memory bytes one batch starts with, the most its call stacks may grow it to,
        batches running at once) of a launch, for the caller to budget before :meth:`launch`."""
        ir = function.ir
        if ir is None or (not ir.local_size and ir.calls is None):
            return 0, 0, 1
        cfg = LaunchConfig(_dims(grid, "grid"), _dims(block, "block"), shared_mem_bytes, b"", self.max_lanes, None)
        at_once = 1 if self.remote is None else self.remote.concurrency(function, cfg)
        start = batch_local_bytes(ir, cfg)
        return start, max(start, LOCAL_BUDGET) if ir.calls is not None else start, at_once

    # ---- limits ------------------------------------------------------------------------------
    def malloc_heap_size(self) -> int:
        """Bytes of the device malloc heap (cudaLimitMallocHeapSize)."""
        return heap_of(self.arena).size

    def set_malloc_heap_size(self, size: int) -> None:
        """Set cudaLimitMallocHeapSize; CUDA_ERROR_INVALID_VALUE after a kernel used the heap."""
        with self._lock:
            heap_of(self.arena).set_size(size)

    # ---- memory ------------------------------------------------------------------------------
    def mem_alloc(self, size: int) -> int:
        """Allocate ``size`` bytes of device memory; returns the device pointer."""
        self._check()
        with self._lock:
            return self.arena.alloc(size)

    def mem_free(self, ptr: int) -> None:
        self._check()
        with self._lock:
            if ptr in self._module_allocs:
                raise EmuError(CUDA_ERROR_INVALID_VALUE, f"{ptr:#x} belongs to a module variable")
            self.arena.free(ptr)

    def memcpy_htod(self, ptr: int, data) -> None:
        """Copy host bytes (any buffer) to device memory at ``ptr``."""
        if self.sticky is not None:      # _check, without a call per copy
            self._check()
        self.arena.write(ptr, data)

    def memcpy_dtoh(self, ptr: int, size: int) -> bytes:
        self._check()
        return self.arena.read(ptr, size)

    def memcpy_dtoh_into(self, ptr: int, into) -> None:
        """Copy device memory at ``ptr`` into a writable host buffer."""
        if self.sticky is not None:      # _check, without a call per copy
            self._check()
        self.arena.read_into(ptr, into)

    def memcpy_dtoh_view(self, ptr: int, size: int) -> memoryview:
        """A read-only view of device memory (no copy); it changes when that memory is written."""
        if self.sticky is not None:      # _check, without a call per copy
            self._check()
        return self.arena.read_view(ptr, size)

    def memcpy_htod_view(self, ptr: int, size: int) -> memoryview:
        """A writable view of device memory to copy host bytes into (no copy of its own)."""
        if self.sticky is not None:      # _check, without a call per copy
            self._check()
        return self.arena.write_view(ptr, size)

    def memcpy_dtod(self, dst: int, src: int, size: int) -> None:
        self._check()
        s = self.arena.host_range(src, size, "device-to-device copy source")
        d = self.arena.host_range(dst, size, "device-to-device copy destination")
        self.arena.u8[d:d + size] = self.arena.u8[s:s + size].copy()

    def memset_d8(self, ptr: int, value: int, count: int) -> None:
        self._memset(ptr, value, count, np.uint8, "memset_d8")

    def memset_d16(self, ptr: int, value: int, count: int) -> None:
        self._memset(ptr, value, count, np.uint16, "memset_d16")

    def memset_d32(self, ptr: int, value: int, count: int) -> None:
        self._memset(ptr, value, count, np.uint32, "memset_d32")

    def _memset(self, ptr: int, value: int, count: int, dt, what: str) -> None:
        """Set ``count`` elements of ``dt`` from ``ptr`` to the low bits of ``value``."""
        self._check()
        es = np.dtype(dt).itemsize
        if ptr % es:
            raise EmuError(CUDA_ERROR_INVALID_VALUE, f"{what} needs a {es}-byte aligned pointer")
        off = self.arena.host_range(ptr, es * count, "memset")
        self.arena.u8[off:off + es * count].view(dt)[:] = value & ((1 << 8 * es) - 1)

    def mem_get_info(self) -> tuple[int, int]:
        """(free, total) bytes of the emulated device memory."""
        return self.arena.size - self.arena.used, self.arena.size

    # ---- modules -----------------------------------------------------------------------------
    def load_module(self, ptx_sources, sass_archs=()) -> EmuModule:
        """Load PTX text(s). Several texts are linked as one ``-rdc=true`` program.

        An empty list loads a module without PTX (a SASS-only fatbinary, ``sass_archs`` naming its
        architectures): it loads, and launching from it fails with CUDA_ERROR_NO_BINARY_FOR_GPU.
        Unsupported instructions are refused here with CUDA_ERROR_NOT_SUPPORTED; in a module of more
        than ``parser.LAZY_BODIES`` characters (CuPy's libcub: 21 MB, 383 kernels) function bodies
        are parsed when a kernel is first asked for, and ``get_function`` refuses them then.
        """
        self._check()
        if isinstance(ptx_sources, (str, bytes)):
            ptx_sources = [ptx_sources]
        texts = [s.decode("utf-8", "replace") if isinstance(s, bytes) else s for s in ptx_sources]
        digest = program_digest(texts)
        if not texts:
            log.warning("module without PTX loaded; launches from it will fail (no binary for the emulated GPU)")
            return EmuModule(self, None, digest, sass_archs)
        try:
            prog = program_of(texts, digest)
        except EmuError as e:
            log.error("module load failed: %s", e)
            raise
        with self._lock:
            try:
                mod = EmuModule(self, prog, digest)
            except EmuError as e:
                log.error("module load failed: %s", e)
                raise
            mod.sources = texts
            self._modules.add(mod)
            return mod

    # ---- launch ------------------------------------------------------------------------------
    def launch(self, function: EmuFunction, grid, block, shared_mem_bytes: int, param_bytes: bytes,
               sink: Callable[[str], None] | None = None, depth: int = 0,
               local_limit: int | None = None, cooperative: bool = False) -> None:
        """Run ``function`` over ``grid`` x ``block`` threads to completion, and then the grids it
        launched from the device (``device_launch``), those at nesting level ``depth + 1``.

        ``sink``: where this launch's printf lines go (default: the device's ``printf_sink``).
        ``local_limit``: bytes of local memory one batch's call stacks may grow to.
        ``cooperative``: every CTA runs at once, with a grid barrier (see :mod:`.cooperative`).

        ``param_bytes`` holds the kernel arguments at the offsets of ``function.param_layout`` (each
        parameter at its natural alignment, as the cubin's KPARAM_INFO gives).
        """
        self._check()
        if not isinstance(function, EmuFunction):
            raise EmuError(CUDA_ERROR_INVALID_HANDLE, "launch needs an EmuFunction from get_function()")
        if function.ir is None:
            err = EmuError(CUDA_ERROR_NO_BINARY_FOR_GPU, function.module.no_binary_message(), kernel=function.name)
            log.error("%s", err)
            raise err
        if not function.module.loaded:
            raise EmuError(CUDA_ERROR_INVALID_HANDLE, f"the module of {function.name} was unloaded")
        grid = _dims(grid, "grid")
        block = _dims(block, "block")
        for k in range(3):
            if block[k] > MAX_BLOCK_DIM[k] or grid[k] > MAX_GRID_DIM[k]:
                raise EmuError(CUDA_ERROR_INVALID_VALUE, f"launch dimensions grid={grid} block={block} exceed the "
                                                         f"device limits {MAX_GRID_DIM} / {MAX_BLOCK_DIM}")
        if block[0] * block[1] * block[2] > MAX_THREADS_PER_BLOCK:
            raise EmuError(CUDA_ERROR_INVALID_VALUE, f"block of {block[0] * block[1] * block[2]} threads exceeds "
                                                     f"{MAX_THREADS_PER_BLOCK}")
        ir = function.ir
        if shared_mem_bytes < 0 or ir.shared_static + shared_mem_bytes > SHARED_PER_BLOCK_OPTIN:
            raise EmuError(CUDA_ERROR_INVALID_VALUE,
                           f"{ir.shared_static} bytes static + {shared_mem_bytes} bytes dynamic shared memory "
                           f"exceed the {SHARED_PER_BLOCK_OPTIN}-byte limit per block")
        params = bytes(param_bytes)
        if len(params) < ir.param_size:
            raise EmuError(CUDA_ERROR_INVALID_VALUE, f"{function.name} takes {ir.param_size} bytes of parameters, "
                                                     f"got {len(params)}")
        if self.cancelled:
            raise EmuError(CUDA_ERROR_LAUNCH_FAILED, f"launch of {function.name} refused: the device's work "
                                                     "was cancelled (its session is closing)")
        cfg = LaunchConfig(grid, block, shared_mem_bytes, params, self.max_lanes,
                           self.sink if sink is None else sink, self.max_steps,
                           self.launch_timeout, local_limit=local_limit)
        with self._lock:
            self.launches += 1
            cfg.grid_id = self.launches
            workspace = cooperative_launch.begin(self.arena, ir, cfg) if cooperative else None
            try:
                t0 = time.perf_counter()
                self.arena.grid_depth = depth
                if self.remote is not None and (self.peers
                                                or not self.remote.runs_inline(function, cfg.grid, cfg.block)):
                    stats = self.remote.run(function, cfg, self.launch_timeout, [p.arena for p in self.peers])
                else:
                    stats = run_kernel(function.compiled(), self.arena, function.module.global_addrs, cfg)
                stats["seconds"] = time.perf_counter() - t0
                stats["kernel"] = function.name
                self.last_launch = stats
            except EmuError as e:
                if e.kernel is None:
                    e.locate(function.name, None, None)
                log.error("kernel %s failed: %s", function.name, e)
                if self.sticky_errors and e.code in STICKY_CODES and not self.cancelled:
                    self.sticky = e
                raise
            except MemoryError as e:
                err = EmuError(2, f"host memory exhausted while running {function.name}: {e}; use a smaller "
                                  "max_lanes", kernel=function.name)
                log.error("%s", err)
                raise err from e
            finally:                # a failed grid's launches never run, its buffers are freed
                if workspace is not None:
                    self.arena.free(workspace)
                children = [DeviceLaunch.from_json(r) for r in take_launches(self.arena)]
        for child in in_run_order(children):
            self.launch(function.module.get_function(child.name), child.grid, child.block, child.shared,
                        child.params, sink, depth + 1, local_limit=local_limit)

    def synchronize(self) -> None:
        """Kernels run synchronously; this reports a sticky error like cuCtxSynchronize."""
        self._check()

    # ---- properties --------------------------------------------------------------------------
    def device_properties(self) -> dict:
        """The engine's limits as cudaDeviceProp-style fields of a plausible sm_75-class device
        (emulated on the CPU); the server's full description is ``emu_backend._emu_attributes``."""
        return {
            "name": "cricket emu (emulated sm_75 on the CPU)",
            "emulated": True,
            "totalGlobalMem": self.arena.size,
            "sharedMemPerBlock": SHARED_PER_BLOCK,
            "sharedMemPerBlockOptin": SHARED_PER_BLOCK_OPTIN,
            "sharedMemPerMultiprocessor": SHARED_PER_BLOCK_OPTIN,
            "regsPerBlock": 65536,
            "regsPerMultiprocessor": 65536,
            "warpSize": WARP_SIZE,
            "memPitch": 2**31 - 1,
            "maxThreadsPerBlock": MAX_THREADS_PER_BLOCK,
            "maxThreadsDim": MAX_BLOCK_DIM,
            "maxGridSize": MAX_GRID_DIM,
            "clockRate": 1_590_000,
            "totalConstMem": 65536,
            "major": 7,
            "minor": 5,
            "textureAlignment": 512,
            "multiProcessorCount": SM_COUNT,
            "memoryClockRate": 5_001_000,
            "memoryBusWidth": 256,
            "l2CacheSize": 4 * 1024 * 1024,
            "maxThreadsPerMultiProcessor": 1024,
        }


def _dims(d, what: str) -> tuple[int, int, int]:
    if type(d) is tuple and len(d) == 3 and all(type(x) is int and x >= 1 for x in d):
        return d                              # the server's launches: already three ints
    if isinstance(d, int):
        d = (d,)
    d = tuple(int(x) for x in d) + (1,) * (3 - len(d))
    if len(d) != 3 or min(d) < 1:
        raise EmuError(CUDA_ERROR_INVALID_VALUE, f"{what} dimensions {d} must be three positive integers")
    return d


def pack_params(function: EmuFunction, *values) -> bytes:
    """Pack Python values into ``function``'s param buffer by the PTX parameter types (a convenience
    for tests and Python callers; ints for pointers and integers, floats for floats, bytes as is)."""
    ir = function.ir
    if ir is None:
        raise EmuError(CUDA_ERROR_NO_BINARY_FOR_GPU, function.module.no_binary_message())
    if len(values) != len(ir.params):
        raise EmuError(CUDA_ERROR_INVALID_VALUE, f"{function.name} takes {len(ir.params)} parameters, "
                                                 f"got {len(values)}")
    buf = bytearray(ir.param_size)
    for p, v in zip(ir.params, values):
        if isinstance(v, (bytes, bytearray, memoryview)):
            raw = bytes(v)
            if len(raw) != p.size:
                raise EmuError(CUDA_ERROR_INVALID_VALUE, f"parameter {p.name} is {p.size} bytes, got {len(raw)}")
        else:
            t = p.type
            size = type_size(t)
            if t[0] == "f":
                raw = struct.pack({4: "<f", 8: "<d"}[size], float(v)) if size in (4, 8) else \
                    np.float16(v).tobytes()
            else:
                raw = (int(v) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
        buf[p.offset:p.offset + len(raw)] = raw
    return bytes(buf)

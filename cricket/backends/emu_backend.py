"""The ``emu`` backend: the PTX interpreter of :mod:`cricket.backends.emu` behind the backend interface.

Each session gets its own emulated device (its own arena), so a faulting kernel in one session
leaves every other session untouched. Its kernels run in a worker process of its own (the arena
shared with it), where they cannot starve other sessions and can be stopped. Work is ordered on
the session's worker thread, so streams complete in submission order and events take the time at
which they are reached.
Module images: the PTX of a fatbin (all entries, including ``-rdc`` translation units), of a PTX
text, or none for a bare cubin (which loads, and fails at launch with NO_BINARY_FOR_GPU).
Kernel parameter layouts come from the cubin's ``.nv.info`` where there is one, else from the PTX.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from typing import Any, Callable

from .. import _env
from ..cudafacts import curesult
from ..cudafacts import device_attributes, limits
from . import emu_devices, reference_device
from .base import Backend, BackendError, Device, DeviceProperties, FunctionInfo, ImageKind, ParamInfo

log = logging.getLogger(__name__)


def _engine():
    from . import emu
    return emu


def _translate(exc: Exception) -> BackendError:
    code = getattr(exc, "code", None)
    if isinstance(code, int):
        return BackendError(code, (getattr(exc, "message", None) or str(exc)) + _location(exc))
    return BackendError(curesult.UNKNOWN, f"{type(exc).__name__}: {exc}")


def _location(exc: Exception) -> str:
    """Where in a kernel the error happened, for the client to show (cricket.client.kernel_faults):
    `` [kernel NAME at `INSTRUCTION` (FILE:LINE)]``, or nothing outside a kernel."""
    kernel = getattr(exc, "kernel", None)
    if not kernel:
        return ""
    instruction = getattr(exc, "instruction", None)
    source = getattr(exc, "source", None)
    return (f" [kernel {kernel}" + (f" at `{instruction}`" if instruction else "")
            + (f" ({source})" if source else "") + "]")


class _Errors:
    """Turns the engine's errors (which carry a CUDA code) into BackendError."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc is None or isinstance(exc, BackendError):
            return False
        if isinstance(exc, Exception):
            raise _translate(exc) from exc
        return False


_errors = _Errors()


def _ptx_text(image: bytes) -> str:
    """A PTX image as text. PTX is text: bytes that are not UTF-8 are a malformed image, refused
    here rather than decoded with replacements (a binary upload of hundreds of MiB would become a
    string several times its size before the parser saw its first bad byte)."""
    view = memoryview(image).cast("B")
    end = len(view)
    while end and view[end - 1] == 0:          # a C string's terminator, as the driver takes it
        end -= 1
    try:
        return str(view[:end], "utf-8")       # no copy of the bytes before the text
    except UnicodeDecodeError as exc:
        raise BackendError(curesult.INVALID_PTX, f"the PTX image is not text: byte {exc.start} is not UTF-8 "
                                                 "(send PTX as nvcc writes it, or a fatbin)") from None


def _arena_for(limit: int) -> int:
    """Address space to reserve for a session that may hold ``limit`` bytes: its allocations and
    module variables, half as much again for allocation alignment and a malloc heap's bookkeeping,
    and the default malloc heap (which is not charged)."""
    return limit + limit // 2 + 4 * limits.DEFAULTS[limits.MALLOC_HEAP_SIZE]


@dataclasses.dataclass
class EmuModule:
    native: Any                  # the engine's module
    image: bytes
    kind: ImageKind
    has_ptx: bool
    calls_printf: bool           # its PTX declares or calls vprintf
    charged: int = 0             # bytes of its device variables in the session's memory budget


@dataclasses.dataclass
class EmuEvent:
    recorded_at: float | None = None


def _param_layout(module: EmuModule, name: str) -> tuple[list[ParamInfo], int] | None:
    """Offsets and sizes of ``name``'s parameters from the image, None when it cannot say."""
    from ..fatbin import Cubin, Fatbin, FatbinError, PtxModule
    try:
        if module.kind == ImageKind.FATBIN:
            layout = Fatbin.from_bytes(module.image).kernel(name)
        elif module.kind == ImageKind.CUBIN:
            layout = Cubin(module.image).kernel(name)
        else:
            layout = PtxModule(module.image.decode(errors="replace")).kernel(name)
    except (FatbinError, KeyError, ValueError) as exc:
        log.debug("no parameter layout for %s from the image: %s", name, exc)
        return None
    return [ParamInfo(p.offset, p.size) for p in layout.params], layout.param_size


class EmuDevice(Device):
    """One session's emulated device."""

    def __init__(self, engine_device: Any, properties: DeviceProperties) -> None:
        self.dev = engine_device
        self.props = properties
        self.account: Any = None        # the session's SessionMemory, once the server gave it

    def set_memory_account(self, account: Any) -> None:
        """Module globals and launches' local memory count against the session's memory from now
        on; the arena reserves address space for what the session may hold, not 16 GiB."""
        self.account = account
        limit = account.limit()
        if limit is not None and _arena_for(limit) < self.dev.arena.size:
            with _errors:
                self.dev.resize_arena(_arena_for(limit))

    # memory
    def mem_alloc(self, size: int) -> int:
        with _errors:
            return int(self.dev.mem_alloc(size))

    def mem_free(self, ptr: int) -> None:
        with _errors:
            self.dev.mem_free(ptr)

    def mem_get_info(self) -> tuple[int, int]:
        with _errors:
            free, total = self.dev.mem_get_info()
        return int(free), int(total)

    def textures(self) -> Any:
        """The emulator's arrays, textures and surfaces (used by cricket.server.arrays)."""
        from .emu import textures
        return textures

    def set_limit(self, limit: int, value: int) -> None:
        if limit == limits.MALLOC_HEAP_SIZE:
            with _errors:
                self.dev.set_malloc_heap_size(value)
        elif limit != limits.STACK_SIZE:     # emulated frames have no fixed stack to size
            raise BackendError(curesult.UNSUPPORTED_LIMIT, f"the emu device has no CUlimit {limit}")

    def memcpy_htod(self, dst: int, data, stream=None) -> None:
        with _errors:
            self.dev.memcpy_htod(dst, data)

    def memcpy_dtoh(self, src: int, size: int, stream=None) -> bytes:
        with _errors:
            return bytes(self.dev.memcpy_dtoh(src, size))

    # The copies every small cudaMemcpy takes translate errors with try/except rather than
    # ``with _errors`` (whose __enter__ and __exit__ are two Python calls per copy).
    def memcpy_htod_host(self, dst: int, data, address: int, stream=None) -> None:
        try:
            self.dev.memcpy_htod(dst, data)
        except BackendError:
            raise
        except Exception as exc:
            raise _translate(exc) from exc

    def memcpy_dtoh_host(self, src: int, into, address: int, stream=None) -> None:
        try:
            self.dev.memcpy_dtoh_into(src, into)
        except BackendError:
            raise
        except Exception as exc:
            raise _translate(exc) from exc

    def host_address(self, ptr: int, size: int) -> int | None:
        dev = self.dev
        if dev.sticky is not None:
            return None
        return dev.arena.host_address(ptr, size)

    def memcpy_dtoh_view(self, src: int, size: int, stream=None) -> memoryview:
        try:
            return self.dev.memcpy_dtoh_view(src, size)
        except BackendError:
            raise
        except Exception as exc:
            raise _translate(exc) from exc

    def memcpy_htod_view(self, dst: int, size: int, stream=None) -> memoryview:
        try:
            return self.dev.memcpy_htod_view(dst, size)
        except BackendError:
            raise
        except Exception as exc:
            raise _translate(exc) from exc

    def memcpy_dtod(self, dst: int, src: int, size: int, stream=None) -> None:
        with _errors:
            self.dev.memcpy_dtod(dst, src, size)

    def memset(self, dst: int, value: int, element_size: int, count: int, stream=None) -> None:
        fill = {1: self.dev.memset_d8, 2: self.dev.memset_d16, 4: self.dev.memset_d32}.get(element_size)
        if fill is None:
            raise BackendError(curesult.INVALID_VALUE, f"memset element size {element_size}: use 1, 2 or 4")
        with _errors:
            fill(dst, value, count)

    # modules
    def module_load(self, image: bytes, kind: ImageKind) -> EmuModule:
        sources, sass_archs = self._ptx_sources(image, kind)
        with _errors:
            native = self.dev.load_module(sources, sass_archs=sass_archs)
        charged = self.dev.module_bytes(native) if self.account is not None else 0
        if charged:
            try:
                self.account.reserve(charged)
            except BackendError as exc:
                native.unload()
                raise BackendError(exc.code, f"the module's device variables take {charged} bytes: "
                                             f"{exc.message}") from None
        return EmuModule(native=native, image=bytes(image), kind=kind, has_ptx=bool(sources),
                         calls_printf=any("vprintf" in text for text in sources), charged=charged)

    def module_calls_printf(self, module: EmuModule, image: bytes) -> bool:
        return module.calls_printf

    @staticmethod
    def _ptx_sources(image: bytes, kind: ImageKind) -> tuple[list[str], tuple[int, ...]]:
        """The PTX texts of an image, and the SASS architectures it has (for the rebuild hint)."""
        from ..fatbin import Cubin, FatbinError, iter_containers
        try:
            if kind == ImageKind.PTX:
                return [_ptx_text(image)], ()
            if kind == ImageKind.CUBIN:
                return [], (Cubin(image).arch,)       # SASS only: nothing the emulator can run
            # Several containers back to back: an -rdc program's linked container followed by its
            # translation units' containers, whose PTX the engine links itself.
            sources: dict[str, None] = {}
            archs: set[int] = set()
            for fatbin in iter_containers(memoryview(image), "<module image>"):
                sources.update(dict.fromkeys(fatbin.ptx_sources()))
                archs.update(e.arch for e in fatbin.all_entries() if e.is_elf)
            return list(sources), tuple(sorted(archs))
        except FatbinError as exc:
            raise BackendError(curesult.INVALID_IMAGE, f"the module image could not be read: {exc}") from None

    def module_unload(self, module: EmuModule) -> None:
        unload = getattr(module.native, "unload", None)
        if unload is not None:
            with _errors:
                unload()
        if module.charged:
            self.account.release(module.charged)
            module.charged = 0

    def module_get_function(self, module: EmuModule, name: str) -> FunctionInfo:
        with _errors:
            function = module.native.get_function(name)
        if module.has_ptx:
            # The layout the engine reads the parameter buffer by.
            params = [ParamInfo(int(o), int(s), k) for (o, s), k in zip(function.param_layout, function.param_kinds)]
            size = int(function.param_size)
            with _errors:
                attributes = function.attributes()
        else:
            # No PTX: the launch will fail with NO_BINARY_FOR_GPU, but the client can still pack.
            params, size = _param_layout(module, name) or ([], 0)
            attributes = {}
        return FunctionInfo(native=function, params=params, param_size=size,
                            max_threads_per_block=int(attributes.get("max_threads_per_block", 1024)),
                            num_regs=int(attributes.get("num_regs", 0)),
                            shared_size_bytes=int(attributes.get("shared_size_bytes", 0)),
                            const_size_bytes=int(attributes.get("const_size_bytes", 0)),
                            local_size_bytes=int(attributes.get("local_size_bytes", 0)),
                            ptx_version=int(attributes.get("ptx_version", 0)),
                            binary_version=int(attributes.get("binary_version", 0)))

    def module_get_global(self, module: EmuModule, name: str) -> tuple[int, int]:
        with _errors:
            ptr, size = module.native.get_global(name)
        return int(ptr), int(size)

    captures_output = True
    cooperative_launch = True

    def launch(self, function: Any, grid, block, shared_mem: int, stream: Any, params: bytes,
               output: Callable[[str], None] | None = None, cooperative: bool = False) -> None:
        granted, local_limit = self._grant_local_memory(function, grid, block, shared_mem)
        # (a launch for which launch_is_quick holds may run here on the server's event loop)
        try:
            with _errors:
                if cooperative:
                    from .emu.cooperative import check_resident
                    check_resident(self.props.attributes, function.attributes(), grid, block, shared_mem)
                self.dev.launch(function, tuple(grid), tuple(block), shared_mem, bytes(params), sink=output,
                                local_limit=local_limit, cooperative=cooperative)
        finally:
            if granted:
                self.account.release(granted)

    def launch_is_quick(self, function: Any, grid, block, shared_mem: int) -> bool:
        return self.dev.launch_is_quick(function, grid, block)

    def _grant_local_memory(self, function: Any, grid, block, shared_mem: int) -> tuple[int, int | None]:
        """Charge a launch's local memory to the session for as long as it runs: what its batches
        start with, and room for its call stacks to grow (what the session has left, up to the
        emulator's own bound). Returns (bytes charged, bytes one batch may grow to)."""
        if self.account is None:
            return 0, None
        with _errors:
            start, most, at_once = self.dev.launch_local_memory(function, tuple(grid), tuple(block), shared_mem)
        need = start * at_once
        if not need and most == start:
            return 0, None
        try:
            self.account.reserve(need)
        except BackendError as exc:
            raise BackendError(curesult.OUT_OF_MEMORY,
                               f"launching {getattr(function, 'name', 'the kernel')} needs {need} bytes of local "
                               f"memory ({at_once} batch(es) of {start}): {exc.message}") from None
        room = (most - start) * at_once
        available = self.account.available()
        if available is not None:
            room = min(room, available)
        if room:
            self.account.reserve(room)
        return need + room, (need + room) // at_once

    # streams and events: work is done in order on the session's worker, so they are bookkeeping
    def stream_create(self, flags: int) -> object:
        return object()

    def stream_destroy(self, stream: Any) -> None:
        pass

    def stream_synchronize(self, stream: Any) -> None:
        self.synchronize()

    def stream_query(self, stream: Any) -> bool:
        return True

    def stream_wait_event(self, stream: Any, event: EmuEvent) -> None:
        pass

    def event_create(self, flags: int) -> EmuEvent:
        return EmuEvent()

    def event_destroy(self, event: EmuEvent) -> None:
        pass

    def event_record(self, event: EmuEvent, stream: Any) -> None:
        event.recorded_at = time.perf_counter()

    def event_synchronize(self, event: EmuEvent) -> None:
        pass

    def event_query(self, event: EmuEvent) -> bool:
        return True

    def event_elapsed_time(self, start: EmuEvent, end: EmuEvent) -> float:
        if start.recorded_at is None or end.recorded_at is None:
            raise BackendError(curesult.INVALID_HANDLE, "both events must have been recorded")
        return (end.recorded_at - start.recorded_at) * 1000.0

    def synchronize(self) -> None:
        with _errors:
            self.dev.synchronize()

    def release(self) -> None:
        close = getattr(self.dev, "close", None)
        if close is not None:
            close()

    def cancel(self) -> None:
        self.dev.cancel()

    def set_kernel_timeout(self, seconds: float) -> None:
        self.dev.launch_timeout = seconds

    def enable_peer_access(self, peer: Device) -> None:
        emu_devices.enable_peer(self.dev, peer.dev)

    def disable_peer_access(self, peer: Device) -> None:
        emu_devices.disable_peer(self.dev, peer.dev)


_EMU_UUID = b"cricket-emu-sm75"

def _emu_attributes(props: dict) -> dict[int, int]:
    """Every CUdevice_attribute of the emulated device, as HELLO reports it to both client faces:
    the part it stands for (``reference_device``) with the engine's limits (``props``: what the PTX
    interpreter enforces) in place, and what differs in the emulation."""
    A = device_attributes
    block, grid = props["maxThreadsDim"], props["maxGridSize"]
    engine = {
        A.MAX_THREADS_PER_BLOCK: props["maxThreadsPerBlock"],
        A.MAX_BLOCK_DIM_X: block[0], A.MAX_BLOCK_DIM_Y: block[1], A.MAX_BLOCK_DIM_Z: block[2],
        A.MAX_GRID_DIM_X: grid[0], A.MAX_GRID_DIM_Y: grid[1], A.MAX_GRID_DIM_Z: grid[2],
        A.MAX_SHARED_MEMORY_PER_BLOCK: props["sharedMemPerBlock"],
        A.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: props["sharedMemPerBlockOptin"],
        A.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: props["sharedMemPerMultiprocessor"],
        A.TOTAL_CONSTANT_MEMORY: props["totalConstMem"],
        A.WARP_SIZE: props["warpSize"],
        A.MAX_PITCH: props["memPitch"],
        A.MAX_REGISTERS_PER_BLOCK: props["regsPerBlock"],
        A.MAX_REGISTERS_PER_MULTIPROCESSOR: props["regsPerMultiprocessor"],
        A.CLOCK_RATE: props["clockRate"],
        A.TEXTURE_ALIGNMENT: props["textureAlignment"],
        A.MULTIPROCESSOR_COUNT: props["multiProcessorCount"],
        A.MEMORY_CLOCK_RATE: props["memoryClockRate"],
        A.GLOBAL_MEMORY_BUS_WIDTH: props["memoryBusWidth"],
        A.L2_CACHE_SIZE: props["l2CacheSize"],
        A.MAX_THREADS_PER_MULTIPROCESSOR: props["maxThreadsPerMultiProcessor"],
        A.COMPUTE_CAPABILITY_MAJOR: props["major"], A.COMPUTE_CAPABILITY_MINOR: props["minor"],
        # one ordered queue per session: copies overlap the host, not the session's kernels
        A.ASYNC_ENGINE_COUNT: 1,
    }
    return {int(a): int(v) for a, v in {**reference_device.ATTRIBUTES, **engine}.items()}


class EmuBackend(Backend):
    """CUDA kernels interpreted on the CPU (PTX on NumPy); one emulated device per session."""

    type_name = "emu"
    description = "PTX interpreter on NumPy: the CPU as an emulated CUDA device"
    emulated = True
    # Copies and allocations finish at once (there is no device queue to wait for): the server may
    # run small ones on its event loop when the session's worker is idle, saving two thread hops.
    quick_memory_ops = True
    # Kernels and copies run on the session's worker to their end: with the worker idle, the
    # session's work is done, and the server answers synchronising calls and queries at once.
    idle_with_worker = True

    def __init__(self, spec: str = "") -> None:
        super().__init__(spec)
        self._options = self._parse_spec(spec)
        # Sessions' kernels run in worker processes (see emu.workers), forked by one zygote.
        from .emu.workers import KernelWorkers
        self._workers = KernelWorkers()
        probe = self._new_engine_device(in_process=True)
        try:
            self._properties = self._describe(probe)
        finally:
            close = getattr(probe, "close", None)
            if close is not None:
                close()
        self._shared: EmuDevice | None = None
        self._lock = threading.Lock()

    @staticmethod
    def _parse_spec(spec: str) -> dict[str, int]:
        """SPEC: ``memory=SIZE`` (bytes, or with a K/M/G suffix) for each session's arena, and
        ``cores=N``: the most worker processes (cores) one launch's CTAs are spread over (default:
        every core this process may use; 1: each launch in one process); ``devices=N``: how many
        devices each session sees (default 1; see :mod:`cricket.backends.emu_devices`)."""
        options: dict[str, int] = {}
        for item in filter(None, (s.strip() for s in spec.split(","))):
            key, _, value = item.partition("=")
            if key not in ("memory", "cores", "devices") or not value:
                raise BackendError(curesult.INVALID_VALUE,
                                   f"emu backend spec {spec!r}: use memory=SIZE, cores=N and/or devices=N, "
                                   "e.g. emu=memory=2G,cores=2")
            try:
                options[key] = _env.parse_size(value) if key == "memory" else int(value)
            except ValueError:
                raise BackendError(curesult.INVALID_VALUE,
                                   f"emu backend spec {spec!r}: bad {'size' if key == 'memory' else 'number'} "
                                   f"{value!r}") from None
            if options[key] < 1:
                raise BackendError(curesult.INVALID_VALUE, f"emu backend spec {spec!r}: {key} must be positive")
        emu_devices.check_options(spec, options)
        return options

    def _new_engine_device(self, in_process: bool = False, index: int = 0) -> Any:
        emu = _engine()
        kwargs: dict[str, Any] = {"arena_size": self._options["memory"]} if "memory" in self._options else {}
        kwargs["arena_base"] = emu_devices.arena_base(index)
        if not in_process:
            kwargs["kernel_workers"] = self._workers
            kwargs["split_launches"] = self._options.get("cores") or len(os.sched_getaffinity(0))
        with _errors:
            return emu.EmuDevice(**kwargs)

    @staticmethod
    def _describe(device: Any) -> DeviceProperties:
        """HELLO's view of the engine: its name, memory and every device attribute."""
        props = device.device_properties()
        return DeviceProperties(name=str(props.get("name", "cricket emu")), uuid=_EMU_UUID,
                                total_memory=int(props.get("totalGlobalMem", 0)),
                                attributes=_emu_attributes(props))

    def devices(self) -> list[DeviceProperties]:
        return [emu_devices.device_properties(self._properties, i) for i in range(self._options.get("devices", 1))]

    def p2p_attribute(self, src: int, dst: int, attribute: int) -> int:
        return emu_devices.LINK.get(attribute, 0)

    def close(self) -> None:
        self._workers.close()

    def _check_index(self, index: int) -> None:
        count = self._options.get("devices", 1)
        if not 0 <= index < count:
            raise BackendError(curesult.INVALID_DEVICE, f"device {index} does not exist (emu has {count})")

    def device(self, index: int) -> Device:
        self._check_index(index)
        if index != 0:      # the shared device (no session) stands for device 0 only
            raise BackendError(curesult.INVALID_DEVICE, f"device {index} has no shared instance")
        with self._lock:
            if self._shared is None:
                self._shared = EmuDevice(self._new_engine_device(), self._properties)
            return self._shared

    def device_ranges(self, first: int) -> list[tuple[int, int]]:
        from .emu.memory import DEFAULT_ARENA
        return emu_devices.placed_ranges(first, len(self.devices()), self._options.get("memory", DEFAULT_ARENA))

    def open_device(self, index: int, first: int = 0) -> Device:
        """Device ``index`` of a session whose devices were placed at ``first`` (``device_ranges``)."""
        self._check_index(index)
        self._workers.start()             # the zygote imports while the session sets up
        return EmuDevice(self._new_engine_device(index=first + index), self.devices()[index])

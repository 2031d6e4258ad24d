"""The ``emu`` backend: the PTX interpreter of :mod:`cricket.backends.emu` behind the backend interface.

Each session gets its own emulated device (its own arena), so a faulting kernel in one session
leaves every other session untouched. Work runs synchronously on the session's worker thread, so
streams complete in submission order and events take the time at which they are reached.
Module images: the PTX of a fatbin (all entries, including ``-rdc`` translation units), of a PTX
text, or none for a bare cubin (which loads, and fails at launch with NO_BINARY_FOR_GPU).
Kernel parameter layouts come from the cubin's ``.nv.info`` where there is one, else from the PTX.
"""
from __future__ import annotations

import dataclasses
import logging
import threading
import time
from typing import Any

from . import curesult
from .base import Backend, BackendError, Device, DeviceProperties, FunctionInfo, ImageKind, ParamInfo

log = logging.getLogger(__name__)


def _engine():
    from . import emu
    return emu


def _translate(exc: Exception) -> BackendError:
    code = getattr(exc, "code", None)
    if isinstance(code, int):
        return BackendError(code, getattr(exc, "message", None) or str(exc))
    return BackendError(curesult.UNKNOWN, f"{type(exc).__name__}: {exc}")


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


@dataclasses.dataclass
class EmuModule:
    native: Any                  # the engine's module
    image: bytes
    kind: ImageKind
    has_ptx: bool


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

    def memcpy_htod(self, dst: int, data, stream=None) -> None:
        with _errors:
            self.dev.memcpy_htod(dst, data)

    def memcpy_dtoh(self, src: int, size: int, stream=None) -> bytes:
        with _errors:
            return bytes(self.dev.memcpy_dtoh(src, size))

    def memcpy_dtod(self, dst: int, src: int, size: int, stream=None) -> None:
        with _errors:
            self.dev.memcpy_dtod(dst, src, size)

    def memset(self, dst: int, value: int, element_size: int, count: int, stream=None) -> None:
        pattern = (value & ((1 << (8 * element_size)) - 1)).to_bytes(element_size, "little")
        with _errors:
            self.dev.memcpy_htod(dst, pattern * count)

    # modules
    def module_load(self, image: bytes, kind: ImageKind) -> EmuModule:
        sources = self._ptx_sources(image, kind)
        with _errors:
            native = self.dev.load_module(sources)
        return EmuModule(native=native, image=bytes(image), kind=kind, has_ptx=bool(sources))

    @staticmethod
    def _ptx_sources(image: bytes, kind: ImageKind) -> list[str]:
        from ..fatbin import Fatbin, FatbinError
        if kind == ImageKind.PTX:
            return [image.rstrip(b"\0").decode(errors="replace")]
        if kind == ImageKind.CUBIN:
            return []        # SASS only: nothing the emulator can run
        try:
            return Fatbin.from_bytes(image).ptx_sources()
        except FatbinError as exc:
            raise BackendError(curesult.INVALID_IMAGE, f"the fatbin could not be read: {exc}") from None

    def module_unload(self, module: EmuModule) -> None:
        unload = getattr(module.native, "unload", None)
        if unload is not None:
            with _errors:
                unload()

    def module_get_function(self, module: EmuModule, name: str) -> FunctionInfo:
        with _errors:
            function = module.native.get_function(name)
        layout = _param_layout(module, name)
        if layout is None:
            params = [ParamInfo(int(o), int(s)) for o, s in getattr(function, "param_layout", [])]
            size = max((p.offset + p.size for p in params), default=0)
        else:
            params, size = layout
        return FunctionInfo(native=function, params=params, param_size=size,
                            max_threads_per_block=self.props.attributes.get(1, 1024),
                            shared_size_bytes=int(getattr(function, "shared_size", 0) or 0))

    def module_get_global(self, module: EmuModule, name: str) -> tuple[int, int]:
        with _errors:
            ptr, size = module.native.get_global(name)
        return int(ptr), int(size)

    def launch(self, function: Any, grid, block, shared_mem: int, stream: Any, params: bytes) -> None:
        with _errors:
            self.dev.launch(function, tuple(grid), tuple(block), shared_mem, bytes(params))

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


class EmuBackend(Backend):
    """CUDA kernels interpreted on the CPU (PTX on NumPy); one emulated device per session."""

    type_name = "emu"
    description = "PTX interpreter on NumPy: the CPU as an emulated CUDA device"
    emulated = True

    def __init__(self, spec: str = "") -> None:
        super().__init__(spec)
        self._options = self._parse_spec(spec)
        probe = self._new_engine_device()
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
        """SPEC: ``memory=SIZE`` (bytes, or with a K/M/G suffix) for each session's arena."""
        options: dict[str, int] = {}
        for item in filter(None, (s.strip() for s in spec.split(","))):
            key, _, value = item.partition("=")
            if key != "memory" or not value:
                raise BackendError(curesult.INVALID_VALUE,
                                   f"emu backend spec {spec!r}: use memory=SIZE, e.g. emu=memory=2G")
            scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(value[-1].upper(), 1)
            try:
                options["memory"] = int(value[:-1] if scale > 1 else value) * scale
            except ValueError:
                raise BackendError(curesult.INVALID_VALUE, f"emu backend spec {spec!r}: bad size {value!r}") from None
        return options

    def _new_engine_device(self) -> Any:
        emu = _engine()
        kwargs = {"memory_size": self._options["memory"]} if "memory" in self._options else {}
        return emu.EmuDevice(**kwargs)

    @staticmethod
    def _describe(device: Any) -> DeviceProperties:
        props = device.device_properties()
        if isinstance(props, DeviceProperties):
            return props
        get = props.get if isinstance(props, dict) else (lambda k, d=None: getattr(props, k, d))
        attributes = get("attributes") or {}
        return DeviceProperties(name=str(get("name", "cricket emulated device")),
                                uuid=bytes(get("uuid", b"cricket-emu-dev0"))[:16].ljust(16, b"\0"),
                                total_memory=int(get("total_memory", 0) or get("totalGlobalMem", 0)),
                                attributes={int(k): int(v) for k, v in attributes.items()})

    def devices(self) -> list[DeviceProperties]:
        return [self._properties]

    def device(self, index: int) -> Device:
        if index != 0:
            raise BackendError(curesult.INVALID_DEVICE, f"device {index} does not exist (emu has one)")
        with self._lock:
            if self._shared is None:
                self._shared = EmuDevice(self._new_engine_device(), self._properties)
            return self._shared

    def open_device(self, index: int) -> Device:
        if index != 0:
            raise BackendError(curesult.INVALID_DEVICE, f"device {index} does not exist (emu has one)")
        return EmuDevice(self._new_engine_device(), self._properties)

"""The ``cuda`` backend: a real GPU through cuda-python's driver API (``cuda.bindings.driver``).

cuda-python is imported lazily, so this module imports everywhere; where cuda-python, the driver or
a GPU is missing, :meth:`CudaBackend.unavailable_reason` says which, and constructing the backend
raises :class:`BackendError` with that reason.

Each session gets a CUDA context of its own on each device (so one session's kernels cannot reach
another's memory, and a fault stays in the session that caused it); with the ``shared`` spec the
sessions share each device's primary context instead, as one process's threads would. The
context is made current on whichever worker thread calls in.
Kernels are launched with the packed parameter buffer (``CU_LAUNCH_PARAM_BUFFER_POINTER``), laid
out by the layout ``cuFuncGetParamInfo`` reports.
"""
from __future__ import annotations

import ctypes
import logging
import threading
from typing import Any

from ..cudafacts import curesult, device_attributes
from .base import Backend, BackendError, Device, DeviceProperties, FunctionInfo, ImageKind, ParamInfo

log = logging.getLogger(__name__)


def _driver():
    from cuda.bindings import driver
    return driver


def _check(result: tuple, what: str) -> Any:
    """Unpack a cuda-python ``(CUresult, *values)`` tuple; raise BackendError on failure."""
    err, *values = result
    code = int(err)
    if code != curesult.SUCCESS:
        raise BackendError(code, f"{what} failed: {curesult.error_name(code)}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


# The context this module last made current on each thread (a session's worker may use several
# devices in turn).
_thread_context = threading.local()


def _s(stream: Any) -> Any:
    """The default stream (None) as the driver's 0."""
    return 0 if stream is None else stream


class CudaDevice(Device):
    """One GPU, through its primary context (shared by the sessions that use it) or, with
    ``isolated``, through a context of its own (one session's: its memory is out of other
    sessions' kernels' reach, and a fault it causes stays in it)."""

    def __init__(self, ordinal: int, *, isolated: bool = False) -> None:
        self._drv = _driver()
        self.ordinal = ordinal
        self.isolated = isolated
        self._dev = _check(self._drv.cuDeviceGet(ordinal), "cuDeviceGet")
        if isolated:
            self._ctx = _check(self._drv.cuCtxCreate(None, 0, self._dev), "cuCtxCreate")
            _thread_context.ctx = self._ctx          # cuCtxCreate made it current here
        else:
            self._ctx = _check(self._drv.cuDevicePrimaryCtxRetain(self._dev), "cuDevicePrimaryCtxRetain")

    def _enter(self) -> Any:
        """Make this device's context current on the calling thread (when it is not already)."""
        if getattr(_thread_context, "ctx", None) is not self._ctx:
            _check(self._drv.cuCtxSetCurrent(self._ctx), "cuCtxSetCurrent")
            _thread_context.ctx = self._ctx
        return self._drv

    def properties(self) -> DeviceProperties:
        drv = self._drv
        name = _check(drv.cuDeviceGetName(256, self._dev), "cuDeviceGetName")
        name = bytes(name).split(b"\0", 1)[0].decode(errors="replace")
        uuid = _check(drv.cuDeviceGetUuid(self._dev), "cuDeviceGetUuid")
        total = _check(drv.cuDeviceTotalMem(self._dev), "cuDeviceTotalMem")
        attributes: dict[int, int] = {}
        for attr in drv.CUdevice_attribute:
            if attr.name.endswith("_MAX"):
                continue
            err, value = drv.cuDeviceGetAttribute(attr, self._dev)
            if int(err) == curesult.SUCCESS:
                attributes[int(attr)] = int(value)
        # this backend's launch has no cooperative form (Device.cooperative_launch): say so
        attributes[int(device_attributes.COOPERATIVE_LAUNCH)] = 0
        return DeviceProperties(name=name, uuid=bytes(uuid.bytes)[:16], total_memory=int(total),
                                attributes=attributes)

    # memory
    def mem_alloc(self, size: int) -> int:
        return int(_check(self._enter().cuMemAlloc(size), "cuMemAlloc"))

    def mem_free(self, ptr: int) -> None:
        _check(self._enter().cuMemFree(ptr), "cuMemFree")

    def mem_get_info(self) -> tuple[int, int]:
        free, total = _check(self._enter().cuMemGetInfo(), "cuMemGetInfo")
        return int(free), int(total)

    def set_limit(self, limit: int, value: int) -> None:
        drv = self._enter()
        _check(drv.cuCtxSetLimit(drv.CUlimit(limit), value), "cuCtxSetLimit")

    def _htod(self, dst: int, source, size: int, stream) -> None:
        """``size`` bytes from ``source`` (a buffer, or the address of host memory) to ``dst``.
        The asynchronous form returns once the driver has staged the bytes (pageable source), so
        the caller may reuse them at once."""
        drv = self._enter()
        if stream is None:
            _check(drv.cuMemcpyHtoD(dst, source, size), "cuMemcpyHtoD")
        else:
            _check(drv.cuMemcpyHtoDAsync(dst, source, size, stream), "cuMemcpyHtoDAsync")

    def _dtoh(self, target, src: int, size: int, stream) -> None:
        """``size`` bytes from ``src`` into ``target`` (a writable buffer, or the address of host
        memory); returns once they are there."""
        drv = self._enter()
        if stream is None:
            _check(drv.cuMemcpyDtoH(target, src, size), "cuMemcpyDtoH")
        else:
            _check(drv.cuMemcpyDtoHAsync(target, src, size, stream), "cuMemcpyDtoHAsync")
            _check(drv.cuStreamSynchronize(stream), "cuStreamSynchronize")

    def memcpy_htod(self, dst: int, data, stream=None) -> None:
        data = bytes(data)
        self._htod(dst, data, len(data), stream)

    def memcpy_dtoh(self, src: int, size: int, stream=None) -> bytes:
        out = bytearray(size)
        self._dtoh(out, src, size, stream)
        return bytes(out)

    def memcpy_htod_host(self, dst: int, data, address: int, stream=None) -> None:
        # From the mapped region's address, no copy here. (Registering the region with
        # cuMemHostRegister would let the DMA engine read it directly, but then this call must
        # wait for the copy: untested, no GPU.)
        self._htod(dst, address, len(data), stream)

    def memcpy_dtoh_host(self, src: int, into, address: int, stream=None) -> None:
        self._dtoh(address, src, len(into), stream)

    def memcpy_dtod(self, dst: int, src: int, size: int, stream=None) -> None:
        drv = self._enter()
        if stream is None:
            _check(drv.cuMemcpyDtoD(dst, src, size), "cuMemcpyDtoD")
        else:
            _check(drv.cuMemcpyDtoDAsync(dst, src, size, stream), "cuMemcpyDtoDAsync")

    def memset(self, dst: int, value: int, element_size: int, count: int, stream=None) -> None:
        drv = self._enter()
        width = {1: "D8", 2: "D16", 4: "D32"}.get(element_size)
        if width is None:
            raise BackendError(curesult.INVALID_VALUE, f"memset element size {element_size}: use 1, 2 or 4")
        if stream is None:
            _check(getattr(drv, f"cuMemset{width}")(dst, value, count), f"cuMemset{width}")
        else:
            _check(getattr(drv, f"cuMemset{width}Async")(dst, value, count, stream), f"cuMemset{width}Async")

    # modules
    def module_load(self, image: bytes, kind: ImageKind) -> Any:
        from ..fatbin.writer import link_inputs
        drv = self._enter()
        if kind == ImageKind.FATBIN:
            inputs = link_inputs(image)
            if inputs:
                image, kind = self._link(drv, inputs), ImageKind.CUBIN
        if kind == ImageKind.PTX and not image.endswith(b"\0"):
            image = image + b"\0"
        return _check(drv.cuModuleLoadData(image), "cuModuleLoadData")

    def module_calls_printf(self, module: Any, image: bytes) -> bool:
        from ..fatbin import image_calls_printf
        return image_calls_printf(image)

    @staticmethod
    def _link(drv: Any, inputs: list) -> bytes:
        """The cubin the driver's own linker makes of a JIT link's inputs (``cricket.client.jit_link``
        checked their symbols already). Written from the documented API; not run without a GPU."""
        from ..fatbin.writer import LINK_INPUT_PREFIX
        state = _check(drv.cuLinkCreate(0, [], []), "cuLinkCreate")
        try:
            for entry in inputs:
                data = entry.payload
                input_type = (drv.CUjitInputType.CU_JIT_INPUT_PTX if entry.is_ptx
                              else drv.CUjitInputType.CU_JIT_INPUT_CUBIN)
                name = entry.name[len(LINK_INPUT_PREFIX):]
                _check(drv.cuLinkAddData(state, input_type, data, len(data), name.encode(), 0, [], []),
                       f"cuLinkAddData({name})")
            cubin, size = _check(drv.cuLinkComplete(state), "cuLinkComplete")
            return ctypes.string_at(int(cubin), int(size))
        finally:
            drv.cuLinkDestroy(state)

    def module_unload(self, module: Any) -> None:
        _check(self._enter().cuModuleUnload(module), "cuModuleUnload")

    def module_get_function(self, module: Any, name: str) -> FunctionInfo:
        drv = self._enter()
        func = _check(drv.cuModuleGetFunction(module, name.encode()), f"cuModuleGetFunction({name})")
        params: list[ParamInfo] = []
        while True:
            err, offset, size = drv.cuFuncGetParamInfo(func, len(params))
            if int(err) != curesult.SUCCESS:
                break
            params.append(ParamInfo(int(offset), int(size)))
        param_size = max((p.offset + p.size for p in params), default=0)
        fa = drv.CUfunction_attribute

        def attr(a) -> int:
            return int(_check(drv.cuFuncGetAttribute(a, func), "cuFuncGetAttribute"))

        return FunctionInfo(
            native=func, params=params, param_size=param_size,
            max_threads_per_block=attr(fa.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
            num_regs=attr(fa.CU_FUNC_ATTRIBUTE_NUM_REGS),
            shared_size_bytes=attr(fa.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
            const_size_bytes=attr(fa.CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES),
            local_size_bytes=attr(fa.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
            ptx_version=attr(fa.CU_FUNC_ATTRIBUTE_PTX_VERSION),
            binary_version=attr(fa.CU_FUNC_ATTRIBUTE_BINARY_VERSION))

    def module_get_global(self, module: Any, name: str) -> tuple[int, int]:
        ptr, size = _check(self._enter().cuModuleGetGlobal(module, name.encode()),
                           f"cuModuleGetGlobal({name})")
        return int(ptr), int(size)

    def launch(self, function: Any, grid, block, shared_mem: int, stream: Any, params: bytes) -> None:
        drv = self._enter()
        # The driver copies the parameters during the call, so these locals may go afterwards.
        buf = ctypes.create_string_buffer(bytes(params), max(len(params), 1))
        size = ctypes.c_size_t(len(params))
        extra = (ctypes.c_void_p * 5)(drv.CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT, ctypes.addressof(buf),
                                      drv.CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT, ctypes.addressof(size),
                                      drv.CU_LAUNCH_PARAM_END_AS_INT)
        # cuda-python takes ``extra`` as the address of the void* array.
        _check(drv.cuLaunchKernel(function, *grid, *block, shared_mem, _s(stream), None,
                                  ctypes.addressof(extra)), "cuLaunchKernel")

    # streams and events
    def stream_create(self, flags: int) -> Any:
        return _check(self._enter().cuStreamCreate(flags), "cuStreamCreate")

    def stream_destroy(self, stream: Any) -> None:
        _check(self._enter().cuStreamDestroy(stream), "cuStreamDestroy")

    def stream_synchronize(self, stream: Any) -> None:
        _check(self._enter().cuStreamSynchronize(_s(stream)), "cuStreamSynchronize")

    def stream_query(self, stream: Any) -> bool:
        err, = self._enter().cuStreamQuery(_s(stream))
        if int(err) == curesult.NOT_READY:
            return False
        _check((err,), "cuStreamQuery")
        return True

    def stream_wait_event(self, stream: Any, event: Any) -> None:
        _check(self._enter().cuStreamWaitEvent(_s(stream), event, 0), "cuStreamWaitEvent")

    def event_create(self, flags: int) -> Any:
        return _check(self._enter().cuEventCreate(flags), "cuEventCreate")

    def event_destroy(self, event: Any) -> None:
        _check(self._enter().cuEventDestroy(event), "cuEventDestroy")

    def event_record(self, event: Any, stream: Any) -> None:
        _check(self._enter().cuEventRecord(event, _s(stream)), "cuEventRecord")

    def event_synchronize(self, event: Any) -> None:
        _check(self._enter().cuEventSynchronize(event), "cuEventSynchronize")

    def event_query(self, event: Any) -> bool:
        err, = self._enter().cuEventQuery(event)
        if int(err) == curesult.NOT_READY:
            return False
        _check((err,), "cuEventQuery")
        return True

    def event_elapsed_time(self, start: Any, end: Any) -> float:
        return float(_check(self._enter().cuEventElapsedTime(start, end), "cuEventElapsedTime"))

    def synchronize(self) -> None:
        _check(self._enter().cuCtxSynchronize(), "cuCtxSynchronize")

    # Peer access between the session's contexts on two GPUs; the driver gives the errors. With
    # ``cuda=shared`` the contexts are the primary ones, so access enabled by one session holds
    # for the others too.
    def enable_peer_access(self, peer: Device) -> None:
        _check(self._enter().cuCtxEnablePeerAccess(peer._ctx, 0), "cuCtxEnablePeerAccess")

    def disable_peer_access(self, peer: Device) -> None:
        _check(self._enter().cuCtxDisablePeerAccess(peer._ctx), "cuCtxDisablePeerAccess")

    def release(self) -> None:
        """The session is gone: an isolated device destroys its context (and all left in it)."""
        if self.isolated:
            self.close()

    def close(self) -> None:
        try:
            if self.isolated:
                self._drv.cuCtxDestroy(self._ctx)
            else:
                self._drv.cuDevicePrimaryCtxRelease(self._dev)
        except Exception:  # the driver may already be shutting down
            log.debug("releasing the context of device %d failed", self.ordinal, exc_info=True)


class CudaBackend(Backend):
    """Real GPUs through the CUDA driver API."""

    type_name = "cuda"
    description = "NVIDIA GPUs through cuda-python's driver API"
    emulated = False

    def __init__(self, spec: str = "") -> None:
        super().__init__(spec)
        reason = self.unavailable_reason()
        if reason is not None:
            raise BackendError(curesult.NO_DEVICE,
                               f"the cuda backend is unavailable: {reason}")
        drv = _driver()
        count = _check(drv.cuDeviceGetCount(), "cuDeviceGetCount")
        ordinals, self.isolate = self._parse_spec(spec, count)
        self._devices = [CudaDevice(o) for o in ordinals]
        self._properties = [d.properties() for d in self._devices]
        self._driver_version = int(_check(drv.cuDriverGetVersion(), "cuDriverGetVersion"))

    @staticmethod
    def _parse_spec(spec: str, count: int) -> tuple[list[int], bool]:
        """SPEC: comma-separated device ordinals to expose (default all), and ``shared`` to let
        sessions share each device's primary context (default: a context per session, which
        ``isolate`` also names), e.g. ``cuda=0,2`` or ``cuda=shared``."""
        ordinals: list[int] = []
        isolate = True
        for item in filter(None, (s.strip() for s in spec.split(","))):
            if item in ("isolate", "shared"):
                isolate = item == "isolate"
            elif item.isdigit():
                ordinals.append(int(item))
            else:
                raise BackendError(curesult.INVALID_VALUE,
                                   f"cuda backend spec {spec!r}: give device ordinals and/or shared, "
                                   f"e.g. cuda=0,1 or cuda=shared")
        if not isolate:
            log.warning("cuda backend: sessions share each device's context (spec %r): one session's "
                        "kernels can read and write another's memory", spec)
        bad = [o for o in ordinals if not 0 <= o < count]
        if bad:
            raise BackendError(curesult.INVALID_DEVICE,
                               f"cuda backend spec {spec!r}: no device {bad} (this machine has {count})")
        return ordinals or list(range(count)), isolate

    def open_device(self, index: int) -> Device:
        shared = self.device(index)
        if not self.isolate:
            return shared
        return CudaDevice(shared.ordinal, isolated=True)

    @classmethod
    def unavailable_reason(cls) -> str | None:
        from .._gpu import gpu_unavailable_reason
        return gpu_unavailable_reason()

    @property
    def driver_version(self) -> int:
        return self._driver_version

    def devices(self) -> list[DeviceProperties]:
        return list(self._properties)

    def device(self, index: int) -> Device:
        if not 0 <= index < len(self._devices):
            raise BackendError(curesult.INVALID_DEVICE,
                               f"device {index} does not exist (the cuda backend has {len(self._devices)})")
        return self._devices[index]

    def p2p_attribute(self, src: int, dst: int, attribute: int) -> int:
        drv = _driver()
        return int(_check(drv.cuDeviceGetP2PAttribute(drv.CUdevice_P2PAttribute(attribute), self.device(src)._dev,
                                                      self.device(dst)._dev), "cuDeviceGetP2PAttribute"))

    def close(self) -> None:
        for d in self._devices:
            d.close()

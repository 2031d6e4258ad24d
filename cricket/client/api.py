"""A small Pythonic API over cricket.x, for Python programs and tests.

    with connect("127.0.0.1:7391") as gpu:          # or a Unix socket path, or None: embedded server
        a = gpu.to_device(np.arange(n, dtype=np.float32))
        out = gpu.alloc(a.size)
        vadd = gpu.load_module("vadd.fatbin").get_function("vadd")
        vadd((n + 255) // 256, 256, a, a, out, n)    # asynchronous, like a CUDA launch
        result = out.to_host(np.float32)             # synchronising: reports kernel errors

Asynchronous operations (launches, async copies, memsets, event records) go out as batched calls
without waiting for a reply; the next synchronising call reports an error any of them met, as CUDA
does. Every failure raises :class:`CudaError` with the CUDA driver code.
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator


from .. import __version__
from ..cudafacts import curesult
from ..cudafacts import device_attributes
from ..cudafacts import device_attributes as A
from ..protocol import NEED_IMAGE, PROCEDURES, PROGRAM, VERSION, SyncClient
from ..protocol import gen as P
from ..rpc import Client
from ..rpc.record import FillableBytes
from . import shm
from .device_output import DeviceOutput
from .direct import (
    COPY_CHUNK, DIRECT_MIN, PROC_DTOH, PROC_HTOD, PROC_HTOD_ASYNC, STATUS_OK, dtoh_args, htod_buffers,
    receive_data_into, take_data,
)
from . import capabilities, visible_devices
from .kernel_args import pack_kernel_args

log = logging.getLogger(__name__)

FATBIN_MAGIC = b"\x50\xed\x55\xba"     # 0xBA55ED50, little-endian
ELF_MAGIC = b"\x7fELF"
MAX_RECORD = (512 << 20) + (1 << 16)   # the largest image cricket.x allows, plus headers

Dim3 = int | Sequence[int]

# CUdevice_attribute numbers with friendly names (cuda.h).
ATTRIBUTE_NAMES = {a: device_attributes.NAMES[a].lower() for a in (
    A.MAX_THREADS_PER_BLOCK, A.MAX_BLOCK_DIM_X, A.MAX_BLOCK_DIM_Y,
    A.MAX_BLOCK_DIM_Z, A.MAX_GRID_DIM_X, A.MAX_GRID_DIM_Y,
    A.MAX_GRID_DIM_Z, A.MAX_SHARED_MEMORY_PER_BLOCK,
    A.TOTAL_CONSTANT_MEMORY, A.WARP_SIZE, A.MAX_REGISTERS_PER_BLOCK,
    A.CLOCK_RATE, A.MULTIPROCESSOR_COUNT, A.MEMORY_CLOCK_RATE,
    A.GLOBAL_MEMORY_BUS_WIDTH, A.L2_CACHE_SIZE,
    A.MAX_THREADS_PER_MULTIPROCESSOR, A.COMPUTE_CAPABILITY_MAJOR,
    A.COMPUTE_CAPABILITY_MINOR)}


class CudaError(Exception):
    """A CUDA failure reported by the server: ``code`` is the CUresult, ``name`` its CUDA name."""

    def __init__(self, code: int, message: str = "", call: str = "") -> None:
        self.code = int(code)
        self.name = curesult.error_name(self.code)
        self.message = message or curesult.error_string(self.code)
        self.call = call
        where = f"{call}: " if call else ""
        super().__init__(f"{where}{self.name} ({self.code}): {self.message}")


def _dim3(value: Dim3) -> P.cr_dim3:
    if hasattr(value, "__index__"):               # an int or a NumPy integer
        dims = (value.__index__(), 1, 1)
    else:
        dims = tuple(int(v) for v in value) + (1,) * (3 - len(value))
        if len(dims) != 3:
            raise ValueError(f"a grid or block has at most 3 dimensions, got {value!r}")
    return P.cr_dim3(x=dims[0], y=dims[1], z=dims[2])


def image_kind(image: bytes) -> int:
    """Guess what an image holds: a fatbin, a cubin (ELF) or PTX text."""
    if image[:4] == FATBIN_MAGIC:
        return P.cr_image_kind.CR_IMAGE_FATBIN
    if image[:4] == ELF_MAGIC:
        return P.cr_image_kind.CR_IMAGE_CUBIN
    head = image[:4096].lstrip()
    if head.startswith(b"//") or b".version" in head or b".target" in head:
        return P.cr_image_kind.CR_IMAGE_PTX
    raise ValueError("not a fatbin, cubin or PTX image; give one that nvcc wrote "
                     "(-fatbin, -cubin or -ptx)")


@dataclass
class Device:
    """A device as HELLO described it; ``attributes`` maps CUdevice_attribute numbers to values."""

    ordinal: int
    name: str
    uuid: bytes
    total_memory: int
    attributes: dict[int, int] = field(repr=False)

    def attribute(self, number: int) -> int:
        return self.attributes[number]

    @property
    def properties(self) -> dict[str, int]:
        """The commonly used attributes by name."""
        return {name: self.attributes[n] for n, name in ATTRIBUTE_NAMES.items() if n in self.attributes}

    @property
    def compute_capability(self) -> tuple[int, int]:
        return self.attributes.get(75, 0), self.attributes.get(76, 0)


class DeviceBuffer:
    """Device memory owned by this connection; pass it as a kernel argument for its address."""

    def __init__(self, conn: Connection, ptr: int, size: int, *, owned: bool = True) -> None:
        self.conn = conn
        self.device_ptr = ptr
        self.size = size
        self._owned = owned

    def __repr__(self) -> str:
        return f"DeviceBuffer({self.device_ptr:#x}, {self.size} bytes)"

    def __int__(self) -> int:
        return self.device_ptr

    def __add__(self, offset: int) -> DeviceBuffer:
        """A view ``offset`` bytes in (not freeable on its own)."""
        if not 0 <= offset <= self.size:
            raise ValueError(f"offset {offset} lies outside the {self.size}-byte buffer")
        return DeviceBuffer(self.conn, self.device_ptr + offset, self.size - offset, owned=False)

    def copy_from_host(self, data: Any, *, stream: Stream | None = None, sync: bool = True) -> None:
        self.conn.memcpy_htod(self, data, stream=stream, sync=sync)

    def to_host(self, dtype: Any = None, shape: Any = None, *, stream: Stream | None = None) -> Any:
        """Copy back (synchronising): bytes, or a NumPy array of ``dtype`` (and ``shape``)."""
        data = self.conn.memcpy_dtoh(self, self.size, stream=stream)
        if dtype is None:
            return data
        import numpy as np      # only here: the CUDA shim's client starts without NumPy
        arr = np.frombuffer(data, dtype=dtype).copy()
        return arr.reshape(shape) if shape is not None else arr

    def memset(self, value: int, *, element_size: int = 1, stream: Stream | None = None,
               sync: bool = True) -> None:
        self.conn.memset(self, value, self.size // element_size, element_size=element_size,
                         stream=stream, sync=sync)

    def free(self) -> None:
        if self._owned and self.device_ptr:
            self.conn._check(self.conn._stub.CR_MEM_FREE(self.device_ptr), "cuMemFree")
            self._owned = False

    def __enter__(self) -> DeviceBuffer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.free()


@dataclass
class Param:
    offset: int
    size: int


class Kernel:
    """A kernel of a loaded module; call it as ``kernel(grid, block, *args)``."""

    def __init__(self, module: Module, name: str, reply: Any) -> None:
        self.module = module
        self.name = name
        self.handle = reply.handle
        self.params = [Param(p.offset, p.size) for p in reply.params]
        self.param_size = reply.param_size
        self.max_threads_per_block = reply.max_threads_per_block
        self.num_regs = reply.num_regs
        self.shared_size_bytes = reply.shared_size_bytes

    def __repr__(self) -> str:
        return f"Kernel({self.name!r}, {len(self.params)} params)"

    def pack(self, args: Sequence[Any]) -> bytes:
        return pack_kernel_args(self.params, self.param_size, args)

    def launch(self, grid: Dim3, block: Dim3, args: Sequence[Any], *, shared_mem: int = 0,
               stream: Stream | None = None, sync: bool = False) -> None:
        """Launch; asynchronous unless ``sync`` (then launch errors are raised here)."""
        conn = self.module.conn
        a = P.cr_launch_args(function=self.handle, grid=_dim3(grid), block=_dim3(block),
                             shared_mem=shared_mem, stream=_stream(stream), params=self.pack(args))
        if sync:
            conn._check(conn._stub.CR_LAUNCH(a), f"launch {self.name}")
        else:
            conn._batched("CR_LAUNCH_ASYNC", a)

    def __call__(self, grid: Dim3, block: Dim3, *args: Any, shared_mem: int = 0,
                 stream: Stream | None = None) -> None:
        self.launch(grid, block, args, shared_mem=shared_mem, stream=stream)


class Module:
    """A module loaded by this connection."""

    def __init__(self, conn: Connection, handle: int, image: bytes, sent_bytes: bool) -> None:
        self.conn = conn
        self.handle = handle
        self._image = image
        self.sent_image = sent_bytes   # False when the server already held the image (cache hit)

    def get_function(self, name: str) -> Kernel:
        """The kernel ``name``; a plain C++ name also finds its mangled symbol (``_Z4vaddPfS_S_i``)."""
        res = self.conn._stub.CR_MODULE_GET_FUNCTION(P.cr_get_args(module=self.handle, name=name))
        if res.status == curesult.NOT_FOUND and not name.startswith("_Z"):
            mangled = self._mangled(name)
            if mangled:
                res = self.conn._stub.CR_MODULE_GET_FUNCTION(P.cr_get_args(module=self.handle, name=mangled))
        self.conn._check(res, f"cuModuleGetFunction({name})")
        return Kernel(self, name, res.function)

    def _mangled(self, name: str) -> str | None:
        pattern = re.compile(rb"_Z%d%s[A-Za-z0-9_]*" % (len(name), re.escape(name.encode())))
        found = set(pattern.findall(self._image))
        return found.pop().decode() if len(found) == 1 else None

    def get_global(self, name: str) -> DeviceBuffer:
        """A ``__device__``/``__constant__`` variable, as a buffer to copy to and from."""
        res = self.conn._check(self.conn._stub.CR_MODULE_GET_GLOBAL(
            P.cr_get_args(module=self.handle, name=name)), f"cuModuleGetGlobal({name})")
        g = res.global_
        return DeviceBuffer(self.conn, g.ptr, g.size, owned=False)

    def unload(self) -> None:
        self.conn._check(self.conn._stub.CR_MODULE_UNLOAD(self.handle), "cuModuleUnload")


def _stream(stream: Stream | None) -> int:
    return 0 if stream is None else stream.handle


class Stream:
    def __init__(self, conn: Connection, handle: int) -> None:
        self.conn = conn
        self.handle = handle

    def synchronize(self) -> None:
        with self.conn._printing():
            self.conn._check(self.conn._stub.CR_STREAM_SYNCHRONIZE(self.handle), "cuStreamSynchronize")

    def query(self) -> bool:
        """True when all work queued on the stream is done."""
        res = self.conn._stub.CR_STREAM_QUERY(self.handle)
        if res.status == curesult.NOT_READY:
            return False
        self.conn._check(res, "cuStreamQuery")
        return True

    def wait_event(self, event: Event) -> None:
        self.conn._batched("CR_STREAM_WAIT_EVENT_ASYNC",
                           P.cr_stream_wait_args(stream=self.handle, event=event.handle))

    def destroy(self) -> None:
        self.conn._check(self.conn._stub.CR_STREAM_DESTROY(self.handle), "cuStreamDestroy")


class Event:
    def __init__(self, conn: Connection, handle: int) -> None:
        self.conn = conn
        self.handle = handle

    def record(self, stream: Stream | None = None) -> None:
        self.conn._batched("CR_EVENT_RECORD_ASYNC",
                           P.cr_event_record_args(event=self.handle, stream=_stream(stream)))

    def synchronize(self) -> None:
        with self.conn._printing():
            self.conn._check(self.conn._stub.CR_EVENT_SYNCHRONIZE(self.handle), "cuEventSynchronize")

    def query(self) -> bool:
        res = self.conn._stub.CR_EVENT_QUERY(self.handle)
        if res.status == curesult.NOT_READY:
            return False
        self.conn._check(res, "cuEventQuery")
        return True

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds from this event to ``end``."""
        res = self.conn._check(self.conn._stub.CR_EVENT_ELAPSED_TIME(
            P.cr_elapsed_args(start=self.handle, end=end.handle)), "cuEventElapsedTime")
        return float(res.value)

    def destroy(self) -> None:
        self.conn._check(self.conn._stub.CR_EVENT_DESTROY(self.handle), "cuEventDestroy")


def _is_host_elf(image: bytes) -> bool:
    """An ELF file that is not a cubin (e_machine EM_CUDA = 190)."""
    return image[:4] == ELF_MAGIC and len(image) >= 20 and int.from_bytes(image[18:20], "little") != 190


def _binary_images(path: str | os.PathLike) -> list[tuple[list[str], bytes]]:
    """(kernel names, module image) of each fatbin a host binary registers; an ``-rdc`` fatbin's
    image carries its translation units' containers after its own."""
    from ..fatbin import find_device_code
    code = find_device_code(path)
    fatbins = code.registered() or code.fatbins
    if not fatbins:
        raise ValueError(f"{path} holds no CUDA device code")
    out = []
    for fb in fatbins:
        parts = (fb, *fb.prelinked)
        names = [n for part in parts for n in part.kernel_names()]
        out.append((names, b"".join(_padded(bytes(part.image)) for part in parts)))
    return out


def _padded(container: bytes) -> bytes:
    """Containers sit back to back on 8-byte boundaries."""
    return container + b"\0" * (-len(container) % 8)


def _as_bytes(data: Any) -> memoryview:
    np = sys.modules.get("numpy")        # an array exists only once NumPy is imported
    if np is not None and isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data)
    return memoryview(data).cast("B")


class Connection:
    """One session with a cricket server (see :func:`connect`)."""

    def __init__(self, address: str | tuple[str, int], *, token: str | None = None,
                 backend: str = "", timeout: float | None = None, client_name: str = "",
                 local_server: Any = None, shared_memory: bool | None = None) -> None:
        self.address = address
        self._local_server = local_server
        # cricket.client.shm: None attaches a region at the first large copy when CRICKET_SHM
        # allows and the server is on this host; False keeps every copy on the socket.
        self._shm_region: Any = False if shared_memory is False else None
        self._rpc = Client(address, timeout=timeout, max_record_size=MAX_RECORD)
        self._stub = SyncClient(self._rpc)
        self._lock = threading.Lock()
        # device printf output of this session's kernels (written to sys.stdout at synchronising calls)
        self.output = DeviceOutput()
        token = os.environ.get("CRICKET_TOKEN", "") if token is None else token
        res = self._check(self._stub.CR_HELLO(P.cr_hello_args(
            protocol=P.CRICKET_PROTOCOL,
            client=client_name or f"cricket-python {__version__} pid {os.getpid()}",
            token=token, backend=backend)), "HELLO")
        ok = res.ok
        self.server = ok.server
        self.backend = ok.backend
        self.emulated = bool(ok.emulated)
        self.driver_version = ok.driver_version
        self.session_id = ok.session
        # every device of the server (``ordinal`` is the server's); ``devices``: those that
        # CUDA_VISIBLE_DEVICES shows, in its order; the calls below take an index into it
        self.server_devices = [Device(i, d.name, bytes(d.uuid), d.total_memory,
                                      capabilities.apply({a.attribute: a.value for a in d.attributes}))
                               for i, d in enumerate(ok.devices)]
        self.devices = visible_devices.visible(self.server_devices)
        if self.devices and self.devices[0].ordinal != 0:
            # the session starts on the server's device 0; make it start on visible device 0
            self._check(self._stub.CR_SET_DEVICE(self.devices[0].ordinal), "cuCtxSetCurrent")

    # --- plumbing ------------------------------------------------------------------

    def _check(self, res: Any, call: str) -> Any:
        if res.status != 0:
            raise CudaError(res.status, getattr(res, "message", ""), call)
        return res

    def _start(self, proc: str, packed: bytes) -> Any:
        """Send a call without waiting (pipelining); ``.result()`` gives the reply's bytes."""
        return self._rpc.start(PROGRAM, VERSION, PROCEDURES[proc], [packed])

    def _batched(self, proc: str, args: Any) -> None:
        getattr(self._stub, f"{proc}_batched")(args)

    @contextlib.contextmanager
    def _printing(self) -> Iterator[None]:
        """Around a synchronising call: the device printf output of the kernels queued before it is
        fetched in the same flight (only once a loaded module prints) and written after it."""
        call = self.output.start(self)
        try:
            yield
        except BaseException:
            with contextlib.suppress(Exception):      # the call's own error is the one to report
                self.output.finish(call)
            raise
        self.output.finish(call)

    def close(self) -> None:
        try:
            self._rpc.close()
        finally:
            if self._local_server is not None:
                self._local_server.stop()
                self._local_server = None

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- devices and context ----------------------------------------------------------

    def set_device(self, ordinal: int) -> None:
        """Make visible device ``ordinal`` (an index into ``devices``) the session's current one."""
        if not 0 <= ordinal < len(self.devices):
            raise CudaError(curesult.INVALID_DEVICE, f"device {ordinal} does not exist "
                            f"({len(self.devices)} visible device(s))", "cuCtxSetCurrent")
        self._check(self._stub.CR_SET_DEVICE(self.devices[ordinal].ordinal), "cuCtxSetCurrent")

    def synchronize(self) -> None:
        """Wait for all queued work; raises the first error of an earlier asynchronous call."""
        with self._printing():
            self._check(self._stub.CR_CTX_SYNCHRONIZE(), "cuCtxSynchronize")

    def reset(self) -> None:
        """Free everything this connection holds on the server and clear its errors
        (cudaDeviceReset); buffers, modules, streams and events obtained before are invalid."""
        self.output.flush(self)
        self._check(self._stub.CR_DEVICE_RESET(), "cuDevicePrimaryCtxReset")

    def set_printf_buffer_size(self, size: int) -> None:
        """The bytes of device printf output the server keeps for this session between
        synchronising calls (cudaLimitPrintfFifoSize; default 1 MiB, at most 16 MiB)."""
        self._check(self._stub.CR_SET_OUTPUT_LIMIT(size), "cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE)")

    def error_string(self, code: int) -> str:
        return self._stub.CR_ERROR_STRING(code)

    # --- memory ----------------------------------------------------------------------

    def alloc(self, size: int) -> DeviceBuffer:
        res = self._check(self._stub.CR_MEM_ALLOC(size), "cuMemAlloc")
        return DeviceBuffer(self, res.ptr, size)

    def to_device(self, data: Any) -> DeviceBuffer:
        """A new buffer holding a copy of ``data`` (NumPy array, bytes, anything with a buffer)."""
        view = _as_bytes(data)
        buf = self.alloc(max(view.nbytes, 1))
        self.memcpy_htod(buf, view)
        return buf

    def mem_get_info(self) -> tuple[int, int]:
        """(free, total) bytes of the current device."""
        info = self._check(self._stub.CR_MEM_GET_INFO(), "cuMemGetInfo").info
        return info.free, info.total

    def memcpy_htod(self, dst: DeviceBuffer | int, data: Any, *, stream: Stream | None = None,
                    sync: bool = True) -> None:
        """Copy host data to the device, in chunks of at most COPY_CHUNK bytes (pipelined). With
        ``sync=False`` the call returns once the bytes are taken: ``data`` may change at once."""
        view = _as_bytes(data)
        base = int(dst)
        handle = _stream(stream)
        rpc = self._rpc
        done = shm.htod(self, base, view, handle, sync)     # large copies, server on this host
        if done and done == view.nbytes:
            return
        view, base = view[done:], base + done
        if sync:
            return self._htod_sync(base, handle, view)
        # The batch leaves later: its bytes are taken now (as CUDA stages a pageable source at
        # the call), so the caller may change ``data`` as soon as this returns.
        for off in range(0, max(view.nbytes, 1), COPY_CHUNK):
            rpc.call_batched(PROGRAM, VERSION, PROC_HTOD_ASYNC,
                             htod_buffers(base + off, handle, memoryview(bytes(view[off:off + COPY_CHUNK]))))

    def _htod_sync(self, base: int, handle: int, view: memoryview) -> None:
        """A synchronous host-to-device copy over the socket (also the CUDA runtime's): the head
        and a view of the data go out in one gathering write, the data is not copied. One chunk
        is one call whose reply is read inline; larger copies send every chunk before the first
        reply is awaited (pipelined)."""
        rpc = self._rpc
        if view.nbytes <= COPY_CHUNK:
            replies = [rpc.call(PROGRAM, VERSION, PROC_HTOD, htod_buffers(base, handle, view))]
        else:
            replies = [call.result() for call in [
                rpc.start(PROGRAM, VERSION, PROC_HTOD, htod_buffers(base + off, handle, view[off:off + COPY_CHUNK]))
                for off in range(0, view.nbytes, COPY_CHUNK)]]
        for reply in replies:
            if reply != STATUS_OK:
                self._check(P.unpack_cr_status_res(reply), "cuMemcpyHtoD")

    def memcpy_dtoh(self, src: DeviceBuffer | int, size: int, *, stream: Stream | None = None,
                    into: Any = None) -> Any:
        """Copy ``size`` bytes back (synchronising), in chunks of at most COPY_CHUNK: as bytes, or
        written into ``into`` (a writable buffer of at least ``size`` bytes), which is returned."""
        base = int(src)
        filler = None
        if into is not None:
            target = memoryview(into).cast("B")
            if target.readonly or target.nbytes < size:
                raise ValueError(f"memcpy_dtoh into a buffer of {target.nbytes} bytes: give a writable "
                                 f"one of at least {size}")
            view = target[:size]
        else:
            # The result is received straight into a new bytes object: no zeroing, no final copy.
            filler = FillableBytes(size)
            view = filler.view
        with self._printing():
            self._dtoh(view, base, size, stream)
        return filler.finish() if filler is not None else into

    def _dtoh(self, view: memoryview, base: int, size: int, stream: Stream | None) -> None:
        if shm.dtoh(self, view, base, _stream(stream)):      # one part through shared memory
            return
        copy = shm.start_dtoh(self, view, base, _stream(stream))
        if copy is not None:                                 # through shared memory
            copy.finish()
            return
        if 0 < size < DIRECT_MIN:   # one small chunk: one call, its reply read inline
            reply = self._rpc.call(PROGRAM, VERSION, PROC_DTOH, [dtoh_args(base, size, _stream(stream))])
            self._data_reply(reply, view, size)
            return
        offsets = list(range(0, size, COPY_CHUNK))
        # Pipelined: all chunk requests go out, then the replies are collected in order.
        pending = [self._start("CR_MEMCPY_DTOH", P.pack_cr_dtoh_args(P.cr_dtoh_args(
            src=base + off, size=min(COPY_CHUNK, size - off), stream=_stream(stream))))
            for off in offsets]
        for off, call in zip(offsets, pending):
            n = min(COPY_CHUNK, size - off)
            # Large chunks are received straight into ``view`` (cricket.client.direct).
            reply = receive_data_into(call, view[off:off + n])
            if reply is not None:
                self._data_reply(reply, view[off:off + n], n)

    def _data_reply(self, reply: memoryview, view: memoryview, n: int) -> None:
        """Put the data of a ``cr_data_res`` reply for ``n`` bytes into ``view``; raise its error."""
        if take_data(reply, view[:n]):
            return
        res = self._check(P.unpack_cr_data_res(reply), "cuMemcpyDtoH")
        if len(res.data) != n:
            raise CudaError(curesult.UNKNOWN, f"the server returned {len(res.data)} of {n} bytes",
                            "cuMemcpyDtoH")
        view[:n] = res.data

    def memcpy_dtod(self, dst: DeviceBuffer | int, src: DeviceBuffer | int, size: int, *,
                    stream: Stream | None = None, sync: bool = True) -> None:
        a = P.cr_dtod_args(dst=int(dst), src=int(src), size=size, stream=_stream(stream))
        if sync:
            self._check(self._stub.CR_MEMCPY_DTOD(a), "cuMemcpyDtoD")
        else:
            self._batched("CR_MEMCPY_DTOD_ASYNC", a)

    def memset(self, dst: DeviceBuffer | int, value: int, count: int, *, element_size: int = 1,
               stream: Stream | None = None, sync: bool = True) -> None:
        a = P.cr_memset_args(dst=int(dst), value=value & 0xFFFFFFFF, element_size=element_size,
                             count=count, stream=_stream(stream))
        if sync:
            self._check(self._stub.CR_MEMSET(a), "cuMemset")
        else:
            self._batched("CR_MEMSET_ASYNC", a)

    # --- modules -----------------------------------------------------------------------

    def load_module(self, source: str | os.PathLike | bytes, kind: int | None = None) -> Module:
        """Load a fatbin, cubin or PTX (a file or its bytes), or the one fatbin of a host executable
        or library. The server is offered the image's hash first; the bytes go over the wire only
        when it does not hold them yet."""
        if isinstance(source, (bytes, bytearray, memoryview)):
            image = bytes(source)
        else:
            image = Path(source).read_bytes()
            if kind is None and _is_host_elf(image):
                images = [img for names, img in _binary_images(source) if names]
                if len(images) != 1:
                    raise ValueError(f"{source} holds {len(images)} fatbins with kernels; use "
                                     f"load_binary() for all of them")
                image, kind = images[0], P.cr_image_kind.CR_IMAGE_FATBIN
        kind = image_kind(image) if kind is None else kind
        digest = hashlib.sha256(image).digest()
        res = self._stub.CR_MODULE_LOAD(P.cr_module_load_args(hash=digest, kind=kind, image=b""))
        sent = False
        if res.status == NEED_IMAGE:
            sent = True
            res = self._stub.CR_MODULE_LOAD(P.cr_module_load_args(hash=digest, kind=kind, image=image))
        self._check(res, "cuModuleLoadData")
        self.output.note_module(res.module.prints)
        return Module(self, res.module.handle, image, sent)

    def load_binary(self, path: str | os.PathLike) -> list[Module]:
        """Load every fatbin a host executable, library or object registers (as nvcc's start-up
        code would), each with the containers of its ``-rdc`` translation units appended."""
        return [self.load_module(image, P.cr_image_kind.CR_IMAGE_FATBIN)
                for _, image in _binary_images(path)]

    # --- streams and events ---------------------------------------------------------------

    def create_stream(self, flags: int = 0) -> Stream:
        return Stream(self, self._check(self._stub.CR_STREAM_CREATE(flags), "cuStreamCreate").handle)

    def create_event(self, flags: int = 0) -> Event:
        return Event(self, self._check(self._stub.CR_EVENT_CREATE(flags), "cuEventCreate").handle)

    # --- administration --------------------------------------------------------------------

    def server_stats(self) -> dict[str, int]:
        return {s.name: s.value for s in self._check(self._stub.CR_SERVER_STATS(), "SERVER_STATS").stats}

    def session_stats(self) -> dict[str, int]:
        return {s.name: s.value for s in self._check(self._stub.CR_SESSION_STATS(), "SESSION_STATS").stats}

    def list_backends(self) -> list[dict[str, Any]]:
        res = self._check(self._stub.CR_LIST_BACKENDS(), "LIST_BACKENDS")
        return [{"type": b.type, "loaded": bool(b.loaded), "available": bool(b.available),
                 "reason": b.reason} for b in res.backends]

    def load_backend(self, type_name: str, spec: str = "") -> None:
        """Load a backend into the running server (needs the admin token in HELLO)."""
        self._check(self._stub.CR_LOAD_BACKEND(P.cr_load_backend_args(type=type_name, spec=spec)),
                    f"LOADBACKEND {type_name}")

    def ping(self) -> None:
        """The NULL procedure: a round trip that touches no backend."""
        self._rpc.null(PROGRAM, VERSION)


def connect(address: str | tuple[str, int] | None = None, *, token: str | None = None,
            backend: str = "", timeout: float | None = None, local_backends: list[str] | None = None,
            shared_memory: bool | None = None) -> Connection:
    """Connect to a cricket server at ``host:port`` or a Unix socket path (default
    ``$CRICKET_SERVER``). With no address at all, start an embedded server (the best backend here,
    or ``local_backends``) that stops when the connection is closed. ``shared_memory=False`` keeps
    copies on the socket even with a server on this host (default: ``CRICKET_SHM`` decides)."""
    address = address or os.environ.get("CRICKET_SERVER") or None
    if address is None:
        from .local_server import LocalServer
        local = LocalServer(local_backends)
        try:
            return Connection(local.address, token=token, backend=backend, timeout=timeout,
                              local_server=local, shared_memory=shared_memory)
        except BaseException:
            local.stop()
            raise
    return Connection(address, token=token, backend=backend, timeout=timeout,
                      shared_memory=shared_memory)

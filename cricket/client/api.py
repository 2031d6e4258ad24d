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

import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cudafacts import curesult
from ..protocol import gen as P
from .errors import CudaError  # noqa: F401  (part of this module's API)
from .kernel_args import pack_kernel_args
from .launch_check import check_launch, dims
from . import shm_pinned
from .session import (  # noqa: F401  (part of this module's API)
    ATTRIBUTE_NAMES, ELF_MAGIC, FATBIN_MAGIC, MAX_RECORD, Device, Dim3, Session, _as_bytes, _dim3, _stream,
    image_kind,
)

log = logging.getLogger(__name__)

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
    kind: int = 0        # cricket.x cr_param_kind (0: the image does not say)


class Kernel:
    """A kernel of a loaded module; call it as ``kernel(grid, block, *args)``."""

    def __init__(self, module: Module, name: str, reply: Any) -> None:
        self.module = module
        self.name = name
        self.handle = reply.handle
        self.params = [Param(p.offset, p.size, p.kind) for p in reply.params]
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
        check_launch(self.name, dims(a.grid), dims(a.block), self.max_threads_per_block,
                     conn.current_device.attributes if conn.devices else {})
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


class HostBuffer:
    """Pinned host memory (``Connection.alloc_host``): ``view`` is its bytes, writable. With a server
    on this host the server maps it too, and a synchronous copy from or to it is one memcpy, the
    server's; elsewhere it is ordinary memory and its copies take the other paths."""

    def __init__(self, conn: Connection, size: int) -> None:
        self.conn = conn
        self.size = size
        self.address = shm_pinned.alloc(conn, size)
        if self.address is None:
            self._keep: Any = bytearray(size)
            self.view = memoryview(self._keep)
        else:
            import ctypes
            self.view = memoryview((ctypes.c_char * size).from_address(self.address)).cast("B")

    def __repr__(self) -> str:
        where = "mapped by the server" if self.address is not None else "not shared"
        return f"HostBuffer({self.size} bytes, {where})"

    def __enter__(self) -> HostBuffer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.free()

    def free(self) -> None:
        """Unmap it; views of it must not be used afterwards."""
        self.view.release()
        if self.address is not None:
            shm_pinned.free(self.conn, self.address)
            self.address = None


class Connection(Session):
    """One session with a cricket server (see :func:`connect`), handing out Python objects."""

    def alloc_host(self, size: int) -> HostBuffer:
        """``size`` bytes of pinned host memory (as cudaMallocHost gives; see :class:`HostBuffer`)."""
        return HostBuffer(self, size)

    def memcpy_htod(self, dst: int, data: Any, *, stream: Any = None, sync: bool = True) -> None:
        if isinstance(data, HostBuffer):
            if sync and data.address is not None and shm_pinned.htod(self, int(dst), data.address, data.size,
                                                                     _stream(stream)):
                return
            data = data.view
        super().memcpy_htod(dst, data, stream=stream, sync=sync)

    def memcpy_dtoh(self, src: int, size: int, *, stream: Any = None, into: Any = None) -> Any:
        """As ``Session.memcpy_dtoh``; ``into`` may be a :class:`HostBuffer` (returned)."""
        if isinstance(into, HostBuffer):
            if size <= into.size and into.address is not None and shm_pinned.dtoh(
                    self, into.address, int(src), size, _stream(stream)):
                return into
            super().memcpy_dtoh(src, size, stream=stream, into=into.view)
            return into
        return super().memcpy_dtoh(src, size, stream=stream, into=into)

    def alloc(self, size: int) -> DeviceBuffer:
        res = self._check(self._stub.CR_MEM_ALLOC(size), "cuMemAlloc")
        return DeviceBuffer(self, res.ptr, size)

    def to_device(self, data: Any) -> DeviceBuffer:
        """A new buffer holding a copy of ``data`` (NumPy array, bytes, anything with a buffer)."""
        view = _as_bytes(data)
        buf = self.alloc(max(view.nbytes, 1))
        self.memcpy_htod(buf, view)
        return buf

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
        handle, sent = self.load_image(image, image_kind(image) if kind is None else kind)
        return Module(self, handle, image, sent)

    def load_binary(self, path: str | os.PathLike) -> list[Module]:
        """Load every fatbin a host executable, library or object registers (as nvcc's start-up
        code would), each with the containers of its ``-rdc`` translation units appended."""
        return [self.load_module(image, P.cr_image_kind.CR_IMAGE_FATBIN)
                for _, image in _binary_images(path)]

    def create_stream(self, flags: int = 0) -> Stream:
        return Stream(self, self._check(self._stub.CR_STREAM_CREATE(flags), "cuStreamCreate").handle)

    def create_event(self, flags: int = 0) -> Event:
        return Event(self, self._check(self._stub.CR_EVENT_CREATE(flags), "cuEventCreate").handle)


class ServerGroup:
    """The servers of a list (``connect("a:7391,b:7391")``), their devices as one list in the order
    the list names them, ``CUDA_VISIBLE_DEVICES`` applied to it (``cricket.client.servers``).
    :meth:`device` gives the connection that runs a device's work; buffers, modules, streams and
    events belong to the connection they were made on; :meth:`copy` copies between any two."""

    def __init__(self, servers: Any) -> None:
        self.servers = servers
        self.devices: list[Device] = servers.devices
        self.connections: list[Connection] = [m.session for m in servers.members]

    def device(self, index: int) -> Connection:
        """The connection of device ``index`` (of :attr:`devices`), switched to that device."""
        if not 0 <= index < len(self.devices):
            raise CudaError(curesult.INVALID_DEVICE, f"device {index} does not exist "
                            f"({len(self.devices)} device(s) on {len(self.connections)} servers)", "cuDeviceGet")
        member = self.servers.device_member[index]
        ordinal = self.devices[index].ordinal
        member.session.set_device(ordinal)        # its own devices are all visible to it, in order
        member.current = ordinal
        return member.session

    def copy(self, dst: DeviceBuffer, src: DeviceBuffer, size: int | None = None) -> None:
        """Copy ``size`` bytes (default: all of ``src``) between two buffers of any devices: on the
        server when both are its, else through this process (synchronising)."""
        from .servers import copy_between
        size = src.size if size is None else size
        if size > min(src.size, dst.size):
            raise ValueError(f"copy of {size} bytes between buffers of {src.size} and {dst.size}")
        if dst.conn is src.conn:
            dst.conn.memcpy_dtod(dst, src, size)
        else:
            copy_between(dst.conn, int(dst), src.conn, int(src), size)

    def close(self) -> None:
        self.servers.close()

    def __enter__(self) -> ServerGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect_servers(addresses: str | Sequence[str], *, token: str | None = None, backend: str = "",
                    timeout: float | None = None) -> ServerGroup:
    """Connect to every server of a list (``"a:7391,b:7391,/run/cricket.sock"`` or a sequence)."""
    from .servers import Servers, parse_servers
    listed = parse_servers(addresses if isinstance(addresses, str) else ",".join(addresses))
    return ServerGroup(Servers.open(listed, lambda address: Connection(
        address, token=token, backend=backend, timeout=timeout, all_devices=True)))


def connect(address: str | tuple[str, int] | None = None, *, token: str | None = None,
            backend: str = "", timeout: float | None = None, local_backends: list[str] | None = None,
            shared_memory: bool | None = None) -> Connection | ServerGroup:
    """Connect to a cricket server at ``host:port`` or a Unix socket path (default
    ``$CRICKET_SERVER``). With no address at all, start an embedded server (the best backend here,
    or ``local_backends``) that stops when the connection is closed. ``shared_memory=False`` keeps
    copies on the socket even with a server on this host (default: ``CRICKET_SHM`` decides).
    Several addresses separated by commas: a :class:`ServerGroup` (:func:`connect_servers`)."""
    address = address or os.environ.get("CRICKET_SERVER") or None
    if isinstance(address, str) and "," in address:
        return connect_servers(address, token=token, backend=backend, timeout=timeout)
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

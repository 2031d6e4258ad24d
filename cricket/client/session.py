"""The session layer: one session with a cricket server, for every face of the client.

What the protocol needs whatever drives it lives here once: the HELLO arguments and what its reply
means (:class:`SessionInfo`: the server's devices, those ``CUDA_VISIBLE_DEVICES`` shows, the
device to start on), load by hash (:class:`ModuleOffer`), the copy chunk size, reply checks. The
blocking :class:`Session` drives them over ``rpc.Client`` (the runtime's process state, the
driver API and the Python API ``api.Connection`` use it); the asyncio face (``aio``) drives the
same pieces over ``rpc.AsyncClient``. Below it: the copy engine (``direct``: chunked calls
received straight into the caller's memory; ``shm``: shared memory with a server on this host)
and device output (``device_output``).
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from ..cudafacts import curesult
from ..cudafacts import device_attributes
from ..cudafacts import device_attributes as A
from ..cudafacts.fatbin_magic import CONTAINER_MAGIC_BYTES as FATBIN_MAGIC
from ..cudafacts.fatbin_magic import ELF_MAGIC
from ..protocol import NEED_IMAGE, PROCEDURES, PROGRAM, VERSION, SyncClient
from ..protocol import gen as P
from ..rpc import Client, tls_env
from ..rpc.record import FillableBytes
from . import capabilities, shm, shm_pinned, visible_devices
from .device_output import DeviceOutput
from .direct import (
    COPY_CHUNK, DIRECT_MIN, PROC_DTOH, PROC_HTOD, PROC_HTOD_ASYNC, STATUS_OK, dtoh_args, htod_buffers,
    receive_data_into, take_data,
)
from .errors import CudaError

log = logging.getLogger(__name__)

MAX_RECORD = (512 << 20) + (1 << 16)   # the largest image cricket.x allows, plus headers


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


Dim3 = int | Sequence[int]

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


def _as_bytes(data: Any) -> memoryview:
    np = sys.modules.get("numpy")        # an array exists only once NumPy is imported
    if np is not None and isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data)
    return memoryview(data).cast("B")


def _stream(stream: Any) -> int:
    """The server handle of a stream object (anything with ``handle``; None: the default stream)."""
    return 0 if stream is None else stream.handle




def check(res: Any, call: str) -> Any:
    """The reply ``res`` of ``call`` when its status is 0, else its CudaError."""
    if res.status != 0:
        raise CudaError(res.status, getattr(res, "message", ""), call)
    return res


def session_token(token: str | None, rpc: Any) -> str:
    """The token to send in HELLO (None: ``CRICKET_TOKEN``); refused where it would travel in
    clear to another host (``rpc`` is the connection, see :func:`tls_env.check_secret_channel`)."""
    token = os.environ.get("CRICKET_TOKEN", "") if token is None else token
    if token:
        tls_env.check_secret_channel(rpc.address, rpc.encrypted)
    return token


def hello_args(token: str | None, backend: str, client: str) -> Any:
    """The HELLO arguments (``token`` None: ``CRICKET_TOKEN``)."""
    token = os.environ.get("CRICKET_TOKEN", "") if token is None else token
    return P.cr_hello_args(protocol=P.CRICKET_PROTOCOL, client=client, token=token, backend=backend)


@dataclass
class SessionInfo:
    """What a HELLO reply says about the server and its devices."""

    server: str
    backend: str
    emulated: bool
    driver_version: int
    session: int
    server_devices: list[Device]     # every device of the server (``ordinal``: the server's)
    devices: list[Device]            # those CUDA_VISIBLE_DEVICES shows, in its order
    first_device: int | None         # the server ordinal to switch to first (visible device 0)

    @classmethod
    def from_hello(cls, ok: Any, all_devices: bool = False) -> SessionInfo:
        """``all_devices``: every device of the server is visible (one server of several, whose
        combined list ``CUDA_VISIBLE_DEVICES`` applies to: ``cricket.client.servers``)."""
        server_devices = [Device(i, d.name, bytes(d.uuid), d.total_memory,
                                 capabilities.apply({a.attribute: a.value for a in d.attributes}))
                          for i, d in enumerate(ok.devices)]
        devices = list(server_devices) if all_devices else visible_devices.visible(server_devices)
        # the session starts on the server's device 0
        first = devices[0].ordinal if devices and devices[0].ordinal != 0 else None
        return cls(ok.server, ok.backend, bool(ok.emulated), ok.driver_version, ok.session,
                   server_devices, devices, first)


class ModuleOffer:
    """Load by hash: the server is offered the image's SHA-256 first; the bytes go over the wire
    only when it answers ``NEED_IMAGE``."""

    def __init__(self, image: bytes, kind: int) -> None:
        self.image = image
        self.kind = kind
        self.digest = hashlib.sha256(image).digest()
        self.sent = False

    def hash_only(self) -> Any:
        return P.cr_module_load_args(hash=self.digest, kind=self.kind, image=b"")

    def needs_image(self, res: Any) -> bool:
        return res.status == NEED_IMAGE

    def with_image(self) -> Any:
        self.sent = True
        return P.cr_module_load_args(hash=self.digest, kind=self.kind, image=self.image)


class Session:
    """One session with a cricket server over a blocking RPC client: HELLO, the device list, the
    calls, copies in chunks (socket, direct receive, shared memory), load by hash, device printf."""

    def __init__(self, address: str | tuple[str, int], *, token: str | None = None,
                 backend: str = "", timeout: float | None = None, client_name: str = "",
                 local_server: Any = None, shared_memory: bool | None = None,
                 all_devices: bool = False) -> None:
        self.address = address
        self._local_server = local_server
        # cricket.client.shm: None attaches a region at the first large copy when CRICKET_SHM
        # allows and the server is on this host; False keeps every copy on the socket.
        self._shm_region: Any = False if shared_memory is False else None
        # cricket.client.shm_pinned: the pinned host allocations this session's server maps
        self.pinned_table = shm_pinned.PinnedTable()
        self._rpc = Client(address, timeout=timeout, max_record_size=MAX_RECORD,
                           tls=tls_env.client_tls(PROGRAM, VERSION))
        self._stub = SyncClient(self._rpc)
        self._lock = threading.Lock()
        # device printf output of this session's kernels (written to sys.stdout at synchronising calls)
        self.output = DeviceOutput()
        res = self._check(self._stub.CR_HELLO(hello_args(
            session_token(token, self._rpc), backend, client_name or f"cricket-python {__version__} pid {os.getpid()}")), "HELLO")
        self.info = SessionInfo.from_hello(res.ok, all_devices)
        self.server, self.backend, self.emulated = self.info.server, self.info.backend, self.info.emulated
        self.driver_version, self.session_id = self.info.driver_version, self.info.session
        self.server_devices, self.devices = self.info.server_devices, self.info.devices
        self.device_index = 0        # into ``devices``: the current device
        if self.info.first_device is not None:
            # the session starts on the server's device 0; make it start on visible device 0
            self._check(self._stub.CR_SET_DEVICE(self.info.first_device), "cuCtxSetCurrent")

    # --- plumbing ------------------------------------------------------------------

    def _check(self, res: Any, call: str) -> Any:
        return check(res, call)

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

    def __enter__(self) -> Session:
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
        self.device_index = ordinal

    @property
    def current_device(self) -> Device:
        """The visible device the session's calls go to (see :meth:`set_device`)."""
        return self.devices[self.device_index]

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

    def set_limit(self, limit: int, value: int) -> None:
        """cuCtxSetLimit for a CUlimit other than the printf FIFO, e.g. the device malloc heap
        (``cricket.cudafacts.limits.MALLOC_HEAP_SIZE``), before a kernel uses it."""
        self._check(self._stub.CR_CTX_SET_LIMIT(P.cr_limit_args(limit=limit, value=value)), "cuCtxSetLimit")

    def error_string(self, code: int) -> str:
        return self._stub.CR_ERROR_STRING(code)

    # --- memory ----------------------------------------------------------------------

    def mem_get_info(self) -> tuple[int, int]:
        """(free, total) bytes of the current device."""
        info = self._check(self._stub.CR_MEM_GET_INFO(), "cuMemGetInfo").info
        return info.free, info.total

    def memcpy_htod(self, dst: int, data: Any, *, stream: Any = None,
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

    def memcpy_dtoh(self, src: int, size: int, *, stream: Any = None,
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

    def _dtoh(self, view: memoryview, base: int, size: int, stream: Any) -> None:
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

    def memcpy_dtod(self, dst: int, src: int, size: int, *,
                    stream: Any = None, sync: bool = True) -> None:
        a = P.cr_dtod_args(dst=int(dst), src=int(src), size=size, stream=_stream(stream))
        if sync:
            self._check(self._stub.CR_MEMCPY_DTOD(a), "cuMemcpyDtoD")
        else:
            self._batched("CR_MEMCPY_DTOD_ASYNC", a)

    def memset(self, dst: int, value: int, count: int, *, element_size: int = 1,
               stream: Any = None, sync: bool = True) -> None:
        a = P.cr_memset_args(dst=int(dst), value=value & 0xFFFFFFFF, element_size=element_size,
                             count=count, stream=_stream(stream))
        if sync:
            self._check(self._stub.CR_MEMSET(a), "cuMemset")
        else:
            self._batched("CR_MEMSET_ASYNC", a)

    # --- administration --------------------------------------------------------------------

    def load_image(self, image: bytes, kind: int) -> tuple[int, bool]:
        """Load a module image by hash (``load_offer``): its server handle, and whether the bytes
        had to be sent (False: the server already held them)."""
        offer = ModuleOffer(image, kind)
        res = self._stub.CR_MODULE_LOAD(offer.hash_only())
        if offer.needs_image(res):
            res = self._stub.CR_MODULE_LOAD(offer.with_image())
        self._check(res, "cuModuleLoadData")
        self.output.note_module(res.module.prints)
        return res.module.handle, offer.sent

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

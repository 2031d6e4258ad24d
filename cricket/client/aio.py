"""The asyncio flavour of the client API: many calls in flight on one connection.

    conn = await aio.connect("127.0.0.1:7391")
    bufs = await asyncio.gather(*(conn.to_device(a) for a in arrays))   # pipelined
    await conn.launch(kernel, grid, block, *args)                       # batched, no reply
    out = await conn.to_host(buf, np.float32)                           # synchronising

Kernels, modules and parameter layouts are those of :mod:`cricket.client.api`; errors raise the
same :class:`~cricket.client.api.CudaError`.
"""
from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from ..cudafacts import curesult
from ..protocol import MAX_INLINE, NEED_IMAGE, PROGRAM, VERSION, AsyncClient as _AsyncStub
from ..protocol import gen as P
from ..rpc import AsyncClient, tls_env
from ..rpc.record import FillableBytes
from .api import MAX_RECORD, CudaError, Device, Dim3, _as_bytes, _dim3, image_kind
from .device_output import DeviceOutput
from .kernel_args import pack_kernel_args


def _check(res: Any, call: str) -> Any:
    if res.status != 0:
        raise CudaError(res.status, getattr(res, "message", ""), call)
    return res


class AsyncKernel:
    def __init__(self, conn: AsyncConnection, name: str, reply: Any) -> None:
        self.conn = conn
        self.name = name
        self.handle = reply.handle
        self.params = list(reply.params)
        self.param_size = reply.param_size


class AsyncConnection:
    """One session over an asyncio RPC client; create with :func:`connect`."""

    def __init__(self, rpc: AsyncClient) -> None:
        self._rpc = rpc
        self._stub = _AsyncStub(rpc)
        self.devices: list[Device] = []
        self.backend = ""
        self.output = DeviceOutput()     # device printf, written to sys.stdout at synchronising calls

    async def _hello(self, token: str, backend: str) -> None:
        res = _check(await self._stub.CR_HELLO(P.cr_hello_args(
            protocol=P.CRICKET_PROTOCOL, client=f"cricket-python-asyncio {__version__} pid {os.getpid()}",
            token=token, backend=backend)), "HELLO")
        self.backend = res.ok.backend
        self.devices = [Device(i, d.name, bytes(d.uuid), d.total_memory,
                               {a.attribute: a.value for a in d.attributes})
                        for i, d in enumerate(res.ok.devices)]

    async def close(self) -> None:
        await self._rpc.close()

    async def __aenter__(self) -> AsyncConnection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def alloc(self, size: int) -> int:
        return _check(await self._stub.CR_MEM_ALLOC(size), "cuMemAlloc").ptr

    async def free(self, ptr: int) -> None:
        _check(await self._stub.CR_MEM_FREE(ptr), "cuMemFree")

    async def to_device(self, data: Any) -> int:
        """A new allocation holding ``data``; returns its device address."""
        view = _as_bytes(data)
        ptr = await self.alloc(max(view.nbytes, 1))
        await self.memcpy_htod(ptr, view)
        return ptr

    async def memcpy_htod(self, dst: int, data: Any) -> None:
        view = _as_bytes(data)
        for off in range(0, max(view.nbytes, 1), MAX_INLINE):
            _check(await self._stub.CR_MEMCPY_HTOD(P.cr_htod_args(
                dst=dst + off, stream=0, data=view[off:off + MAX_INLINE])), "cuMemcpyHtoD")

    async def to_host(self, src: int, size: int, dtype: Any = None) -> Any:
        out = FillableBytes(size)      # filled in place, returned without a copy
        view = out.view
        for off in range(0, size, MAX_INLINE):
            n = min(MAX_INLINE, size - off)
            res = _check(await self._printing(self._stub.CR_MEMCPY_DTOH(
                P.cr_dtoh_args(src=src + off, size=n, stream=0))), "cuMemcpyDtoH")
            if len(res.data) != n:
                raise CudaError(curesult.UNKNOWN, f"the server returned {len(res.data)} of {n} bytes",
                                "cuMemcpyDtoH")
            view[off:off + n] = res.data
        data = out.finish()
        return data if dtype is None else np.frombuffer(data, dtype=dtype).copy()

    async def load_module(self, source: str | os.PathLike | bytes) -> int:
        image = bytes(source) if isinstance(source, (bytes, bytearray)) else Path(source).read_bytes()
        kind = image_kind(image)
        digest = hashlib.sha256(image).digest()
        res = await self._stub.CR_MODULE_LOAD(P.cr_module_load_args(hash=digest, kind=kind, image=b""))
        if res.status == NEED_IMAGE:
            res = await self._stub.CR_MODULE_LOAD(P.cr_module_load_args(hash=digest, kind=kind, image=image))
        module = _check(res, "cuModuleLoadData").module
        self.output.note_module(module.prints)
        return module.handle

    async def get_function(self, module: int, name: str) -> AsyncKernel:
        res = _check(await self._stub.CR_MODULE_GET_FUNCTION(P.cr_get_args(module=module, name=name)),
                     f"cuModuleGetFunction({name})")
        return AsyncKernel(self, name, res.function)

    async def launch(self, kernel: AsyncKernel, grid: Dim3, block: Dim3, *args: Any,
                     shared_mem: int = 0) -> None:
        """Queue a launch (batched, no reply); errors surface at the next synchronising call."""
        params = pack_kernel_args(kernel.params, kernel.param_size,
                                  [getattr(a, "device_ptr", a) for a in args])
        await self._stub.CR_LAUNCH_ASYNC_batched(P.cr_launch_args(
            function=kernel.handle, grid=_dim3(grid), block=_dim3(block), shared_mem=shared_mem,
            stream=0, params=params))

    async def synchronize(self) -> None:
        _check(await self._printing(self._stub.CR_CTX_SYNCHRONIZE()), "cuCtxSynchronize")

    async def _printing(self, call: Any) -> Any:
        """Await a synchronising call; with a printing module loaded, the device printf output is
        fetched in the same flight (queued after it on the server) and written after it."""
        if not self.output.armed:
            return await call
        self.output.fetches += 1
        res, printed = await asyncio.gather(call, self._stub.CR_DEVICE_OUTPUT(), return_exceptions=True)
        if not isinstance(printed, BaseException):
            self.output.deliver(printed)
        if isinstance(res, BaseException):
            raise res
        return res

    async def server_stats(self) -> dict[str, int]:
        return {s.name: s.value for s in _check(await self._stub.CR_SERVER_STATS(), "SERVER_STATS").stats}


async def connect(address: str | tuple[str, int], *, token: str | None = None,
                  backend: str = "") -> AsyncConnection:
    rpc = await AsyncClient.connect(address, max_record_size=MAX_RECORD, timeout=None,
                                    tls=tls_env.client_tls(PROGRAM, VERSION))
    conn = AsyncConnection(rpc)
    try:
        token = os.environ.get("CRICKET_TOKEN", "") if token is None else token
        if token:
            tls_env.check_secret_channel(rpc.address, rpc.encrypted)
        await conn._hello(token, backend)
    except BaseException:
        await rpc.close()
        raise
    return conn

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
import os
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from ..cudafacts import curesult
from ..protocol import PROGRAM, VERSION, AsyncClient as _AsyncStub
from ..protocol import gen as P
from ..rpc import AsyncClient, tls_env
from ..rpc.record import FillableBytes
from .device_output import DeviceOutput
from .direct import COPY_CHUNK
from .errors import CudaError
from .kernel_args import pack_kernel_args
from .launch_check import check_launch, dims
from .session import (
    MAX_RECORD, Device, Dim3, ModuleOffer, SessionInfo, _as_bytes, _dim3, check, hello_args, image_kind,
    session_token,
)


class AsyncKernel:
    def __init__(self, conn: AsyncConnection, name: str, reply: Any) -> None:
        self.conn = conn
        self.name = name
        self.handle = reply.handle
        self.params = list(reply.params)
        self.param_size = reply.param_size
        self.max_threads_per_block = reply.max_threads_per_block


class AsyncConnection:
    """One session over an asyncio RPC client; create with :func:`connect`."""

    def __init__(self, rpc: AsyncClient) -> None:
        self._rpc = rpc
        self._stub = _AsyncStub(rpc)
        self.devices: list[Device] = []
        self.backend = ""
        self.output = DeviceOutput()     # device printf, written to sys.stdout at synchronising calls

    async def _hello(self, token: str | None, backend: str) -> None:
        res = check(await self._stub.CR_HELLO(hello_args(
            token, backend, f"cricket-python-asyncio {__version__} pid {os.getpid()}")), "HELLO")
        self.info = SessionInfo.from_hello(res.ok)
        self.backend = self.info.backend
        self.devices = self.info.devices
        if self.info.first_device is not None:
            check(await self._stub.CR_SET_DEVICE(self.info.first_device), "cuCtxSetCurrent")

    async def close(self) -> None:
        await self._rpc.close()

    async def __aenter__(self) -> AsyncConnection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def alloc(self, size: int) -> int:
        return check(await self._stub.CR_MEM_ALLOC(size), "cuMemAlloc").ptr

    async def free(self, ptr: int) -> None:
        check(await self._stub.CR_MEM_FREE(ptr), "cuMemFree")

    async def to_device(self, data: Any) -> int:
        """A new allocation holding ``data``; returns its device address."""
        view = _as_bytes(data)
        ptr = await self.alloc(max(view.nbytes, 1))
        await self.memcpy_htod(ptr, view)
        return ptr

    async def memcpy_htod(self, dst: int, data: Any) -> None:
        view = _as_bytes(data)
        for off in range(0, max(view.nbytes, 1), COPY_CHUNK):
            check(await self._stub.CR_MEMCPY_HTOD(P.cr_htod_args(
                dst=dst + off, stream=0, data=view[off:off + COPY_CHUNK])), "cuMemcpyHtoD")

    async def to_host(self, src: int, size: int, dtype: Any = None) -> Any:
        out = FillableBytes(size)      # filled in place, returned without a copy
        view = out.view
        for off in range(0, size, COPY_CHUNK):
            n = min(COPY_CHUNK, size - off)
            res = check(await self._printing(self._stub.CR_MEMCPY_DTOH(
                P.cr_dtoh_args(src=src + off, size=n, stream=0))), "cuMemcpyDtoH")
            if len(res.data) != n:
                raise CudaError(curesult.UNKNOWN, f"the server returned {len(res.data)} of {n} bytes",
                                "cuMemcpyDtoH")
            view[off:off + n] = res.data
        data = out.finish()
        return data if dtype is None else np.frombuffer(data, dtype=dtype).copy()

    async def load_module(self, source: str | os.PathLike | bytes) -> int:
        image = bytes(source) if isinstance(source, (bytes, bytearray)) else Path(source).read_bytes()
        offer = ModuleOffer(image, image_kind(image))
        res = await self._stub.CR_MODULE_LOAD(offer.hash_only())
        if offer.needs_image(res):
            res = await self._stub.CR_MODULE_LOAD(offer.with_image())
        module = check(res, "cuModuleLoadData").module
        self.output.note_module(module.prints)
        return module.handle

    async def get_function(self, module: int, name: str) -> AsyncKernel:
        res = check(await self._stub.CR_MODULE_GET_FUNCTION(P.cr_get_args(module=module, name=name)),
                     f"cuModuleGetFunction({name})")
        return AsyncKernel(self, name, res.function)

    async def launch(self, kernel: AsyncKernel, grid: Dim3, block: Dim3, *args: Any,
                     shared_mem: int = 0) -> None:
        """Queue a launch (batched, no reply). A configuration the client can check (block and grid
        limits) is refused here; other errors surface at the next synchronising call."""
        params = pack_kernel_args(kernel.params, kernel.param_size,
                                  [getattr(a, "device_ptr", a) for a in args])
        a = P.cr_launch_args(function=kernel.handle, grid=_dim3(grid), block=_dim3(block),
                             shared_mem=shared_mem, stream=0, params=params)
        check_launch(kernel.name, dims(a.grid), dims(a.block), kernel.max_threads_per_block,
                     self.devices[0].attributes if self.devices else {})
        await self._stub.CR_LAUNCH_ASYNC_batched(a)

    async def synchronize(self) -> None:
        check(await self._printing(self._stub.CR_CTX_SYNCHRONIZE()), "cuCtxSynchronize")

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
        return {s.name: s.value for s in check(await self._stub.CR_SERVER_STATS(), "SERVER_STATS").stats}


async def connect(address: str | tuple[str, int], *, token: str | None = None,
                  backend: str = "") -> AsyncConnection:
    rpc = await AsyncClient.connect(address, max_record_size=MAX_RECORD, timeout=None,
                                    tls=tls_env.client_tls(PROGRAM, VERSION))
    conn = AsyncConnection(rpc)
    try:
        await conn._hello(session_token(token, rpc), backend)
    except BaseException:
        await rpc.close()
        raise
    return conn

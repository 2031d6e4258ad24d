"""The asyncio client: many calls in flight on one connection."""
import asyncio
import os
from pathlib import Path

import numpy as np
import pytest

from cricket.cudafacts import curesult
from cricket.client import aio
from cricket.client.api import CudaError
from cricket.client.local_server import LocalServer

PLUGINS = str(Path(__file__).resolve().parents[1] / "server")


@pytest.fixture(scope="module")
def server():
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [PLUGINS, os.environ.get("PYTHONPATH")]))}
    with LocalServer(["plugin_backend:HostMemoryBackend"], env=env) as s:
        yield s


def test_concurrent_copies_on_one_connection_come_back_intact(server):
    async def main():
        async with await aio.connect(server.address) as conn:
            arrays = [np.full(1000, i, dtype=np.int32) for i in range(20)]
            ptrs = await asyncio.gather(*(conn.to_device(a) for a in arrays))
            back = await asyncio.gather(*(conn.to_host(p, 4000, np.int32) for p in ptrs))
            for a, b in zip(arrays, back):
                np.testing.assert_array_equal(a, b)
            stats = await conn.server_stats()
            assert stats["allocations"] == 20
            await asyncio.gather(*(conn.free(p) for p in ptrs))
    asyncio.run(main())


def test_errors_raise_cuda_error(server):
    async def main():
        async with await aio.connect(server.address) as conn:
            with pytest.raises(CudaError) as info:
                await conn.free(0x1234)
            assert info.value.code == curesult.INVALID_VALUE
    asyncio.run(main())

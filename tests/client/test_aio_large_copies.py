"""The asyncio client's copies above one protocol chunk: views in, bytes out, intact."""
import asyncio
import os
from pathlib import Path

import pytest

from cricket.client import aio
from cricket.client.local_server import LocalServer
from cricket.protocol import MAX_INLINE

PLUGINS = str(Path(__file__).resolve().parents[1] / "server")


@pytest.fixture(scope="module")
def server():
    pytest.importorskip("cricket.backends.emu")
    with LocalServer(["emu"], env={"PYTHONPATH": os.pathsep.join(
            filter(None, [PLUGINS, os.environ.get("PYTHONPATH")]))}) as s:
        yield s


def test_copy_of_more_than_one_chunk_round_trips_as_bytes(server):
    payload = os.urandom(MAX_INLINE + 123_457)          # two calls each way, the second short

    async def main():
        async with await aio.connect(server.address) as conn:
            ptr = await conn.to_device(memoryview(payload))
            back = await conn.to_host(ptr, len(payload))
            await conn.free(ptr)
            return back

    back = asyncio.run(main())
    assert type(back) is bytes and back == payload

"""The asyncio client writes device printf output to sys.stdout at its synchronising calls, fetched
in the same flight as the call, and only once a loaded module prints (emu server)."""
import asyncio
from pathlib import Path

import pytest

from cricket.client import aio
from cricket.client.local_server import LocalServer

PTX = Path(__file__).resolve().parents[1] / "emu" / "ptx"


@pytest.fixture(scope="module")
def server():
    with LocalServer(["emu"]) as s:
        yield s


def test_synchronize_and_copies_bring_the_lines_of_earlier_launches(server, capsys):
    async def main():
        async with await aio.connect(server.address) as conn:
            plain = await conn.load_module((PTX / "basic.sm75.ptx").read_bytes())
            assert not conn.output.armed                       # no printf yet: no fetches
            await conn.synchronize()
            assert conn.output.fetches == 0
            module = await conn.load_module((PTX / "printf.sm75.ptx").read_bytes())
            hello = await conn.get_function(module, "hello")
            await conn.launch(hello, 1, 4, 7, 0.0)
            assert "thread 3 of block 0" not in capsys.readouterr().out
            await conn.synchronize()
            assert "thread 3 of block 0: 10 " in capsys.readouterr().out
            ptr = await conn.alloc(4)
            await conn.launch(hello, 1, 1, 70, 0.0)
            await conn.to_host(ptr, 4)
            assert "thread 0 of block 0: 70 " in capsys.readouterr().out
            assert conn.output.fetches == 2 and plain
    asyncio.run(main())

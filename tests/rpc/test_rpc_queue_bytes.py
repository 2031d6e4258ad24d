"""While a connection's handler runs, the server queues its next records up to a count and a size:
past 16 MiB of queued records it reads no more, so a client cannot make it buffer more."""
from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time

from cricket.rpc import Server, ServerThread
from rpc_calc import CALC_PROG, CalcV1

MIB = 1 << 20


class HeldCalc(CalcV1):
    """CALC whose SLEEP waits until the test releases it."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    async def SLEEP(self, ms):
        await asyncio.get_running_loop().run_in_executor(None, self.release.wait, 60)
        return 0


def _call(proc: int, args: bytes) -> bytes:
    body = struct.pack(">10I", 1, 0, 2, CALC_PROG, 1, proc, 0, 0, 0, 0) + args
    return struct.pack(">I", 0x80000000 | len(body)) + body


def test_queued_records_are_bounded_in_bytes_not_only_in_count(loop_factory):
    calc = HeldCalc()
    server = Server([calc], max_record_size=2 * MIB)
    st = ServerThread(server, ("127.0.0.1", 0), loop_factory=loop_factory).start()
    try:
        with socket.create_connection(st.address, timeout=10) as sock:
            sock.sendall(_call(6, struct.pack(">I", 1)))           # SLEEP: the connection is busy
            echo = _call(2, struct.pack(">I", MIB) + b"e" * MIB)     # 1 MiB records, far under 4096
            sock.setblocking(False)
            sent, stalled_since = 0, None
            while sent < 256 * MIB:
                try:
                    sent += sock.send(echo[sent % len(echo):])
                    stalled_since = None
                except BlockingIOError:
                    stalled_since = stalled_since or time.monotonic()
                    if time.monotonic() - stalled_since > 1.0:       # the server reads no more
                        break
                    time.sleep(0.01)
            calc.release.set()
        # 16 MiB queued, plus what the kernel's socket buffers and the transport hold
        assert sent < 64 * MIB, f"the server took {sent >> 20} MiB while its handler ran"
    finally:
        calc.release.set()
        st.stop()

"""The handlers of CR_MEMCPY_HTOD_PINNED and CR_MEMCPY_DTOH_PINNED, compiled
(``cricket._cext.pinned_copy_handler``) and their pure-Python twin (``cricket.server.pinned_copy_handler``),
side by side: two real emu servers, one with each (``CRICKET_PUREPYTHON``), get the same calls
(valid copies, ranges outside the region and outside the allocation, a region not mapped, an
unknown stream, a call before HELLO, copies behind queued work, a pending asynchronous error) and
must give the same replies, move the same bytes and count the same calls, bytes and latencies.
"""
from __future__ import annotations

import fcntl
import mmap
import os
import re
import secrets
import urllib.request

import pytest

from cricket.client import shm as client_shm
from cricket.client.api import connect
from cricket.cudafacts import curesult
from cricket.protocol import PROCEDURES, PROGRAM, VERSION, SyncClient
from cricket.protocol import gen as P
from cricket.rpc import Client

SIZE = 64 * 1024
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
IMPLEMENTATIONS = {"compiled": "0", "twin": "1"}      # CRICKET_PUREPYTHON of the server


@pytest.fixture(scope="module")
def servers(start_module_server):
    """An emu server with the compiled handler and one with its twin, each serving metrics."""
    pytest.importorskip("prometheus_client")
    pytest.importorskip("cricket._cext.pinned_copy_handler", reason="the compiled handler is not built")
    started = {}
    for name, pure in IMPLEMENTATIONS.items():
        server = start_module_server("--backend", "emu", "--metrics", "127.0.0.1:0",
                                     env={"CRICKET_PUREPYTHON": pure})
        server.metrics = re.search(r"metrics at http://(\S+)/metrics", server.output()).group(1)
        started[name] = server
    assert "using pure-Python cricket.server.pinned_copy_handler" not in started["compiled"].output()
    return started


def _attach(conn, size: int = SIZE) -> tuple[int, mmap.mmap]:
    """Hand a fresh sealed memfd over as a pinned region: (its number, our mapping of it)."""
    fd = os.memfd_create("pinned-twins", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, size)
        os.posix_fallocate(fd, 0, size)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
        view = mmap.mmap(fd, size)
        client_shm.send_descriptor(conn._rpc, fd)
    finally:
        os.close(fd)
    res = conn._stub.CR_SHM_ATTACH_PINNED(size)
    assert res.status == 0, res.message
    return res.region, view


def _args(region: int, device: int, offset: int, size: int, stream: int = 0):
    return P.cr_pinned_copy_args(region=region, device=device, stream=stream, offset=offset, size=size)


def _reply(res) -> tuple[int, str | None]:
    return res.status, res.message


def _script(server) -> tuple[list, dict]:
    """The same calls against ``server``: the replies and bytes seen, and what it counted."""
    seen: list = []
    payload = secrets.token_bytes(SIZE)
    with connect(server.address, shared_memory=False) as conn:     # H→D on the socket: not "shm"
        htod, dtoh = conn._stub.CR_MEMCPY_HTOD_PINNED, conn._stub.CR_MEMCPY_DTOH_PINNED
        region, view = _attach(conn)
        buf = conn.alloc(SIZE)
        view[:] = payload
        for offset, size in ((0, 4096), (4096, 16384), (SIZE - 1, 1), (100, 0), (0, SIZE)):
            seen.append(("htod", offset, size, _reply(htod(_args(region, buf.device_ptr + offset, offset, size)))))
        seen.append(("device after htod", conn.memcpy_dtoh(buf, SIZE) == payload))
        view[:] = bytes(SIZE)
        seen.append(("dtoh", _reply(dtoh(_args(region, buf.device_ptr + 8, 4096, 4096)))))
        seen.append(("region after dtoh", view[4096:8192] == payload[8:4104], view[:4096] == bytes(4096)))
        for call in (htod, dtoh):
            for offset, size in ((SIZE - 4, 8), (SIZE, 1), (2**64 - 1, 2), (0, 2**64 - 1), (0, SIZE + 1)):
                seen.append(("region range", offset, size, _reply(call(_args(region, buf.device_ptr, offset, size)))))
            for start, size in ((SIZE - 8, 16), (-16, 32), (SIZE, 1), (1 << 20, 4)):
                seen.append(("device range", start, size, _reply(call(_args(region, buf.device_ptr + start, 0, size)))))
            for number in (region + 1, 0, 2**32 - 1):
                seen.append(("no region", number, _reply(call(_args(number, buf.device_ptr, 0, 16)))))
            seen.append(("unknown stream", _reply(call(_args(region, buf.device_ptr, 0, 16, stream=987654)))))
        seen.append(("region untouched", view[:] == bytes(4096) + payload[8:4104] + bytes(SIZE - 8192)))
        # Behind queued work the copy waits for the worker and sees what the queue wrote.
        for value in range(1, 60):
            conn.memcpy_htod(buf, bytes([value]) * SIZE, sync=False)
        seen.append(("dtoh behind queued copies", _reply(dtoh(_args(region, buf.device_ptr, 0, SIZE))),
                     view[:] == bytes([59]) * SIZE))
        # An asynchronous copy's error is reported (once) by the next D→H copy; H→D does not ask.
        past_end = P.cr_htod_args(dst=buf.device_ptr + SIZE, stream=0, data=b"x" * 64)
        conn._rpc.call_batched(PROGRAM, VERSION, PROCEDURES["CR_MEMCPY_HTOD_ASYNC"],    # no reply
                               [P.pack_cr_htod_args(past_end)])
        seen.append(("after an async error", _reply(htod(_args(region, buf.device_ptr, 0, 64))),
                     _reply(dtoh(_args(region, buf.device_ptr, 0, 64))),
                     _reply(dtoh(_args(region, buf.device_ptr, 0, 64)))))
        text = urllib.request.urlopen(f"http://{server.metrics}/metrics", timeout=30).read().decode()
    host, port = server.address.rsplit(":", 1)
    with Client((host, int(port))) as rpc:                # no HELLO on this connection
        stub = SyncClient(rpc)
        seen.append(("before HELLO", _reply(stub.CR_MEMCPY_HTOD_PINNED(_args(1, 1 << 40, 0, 16))),
                     _reply(stub.CR_MEMCPY_DTOH_PINNED(_args(1, 1 << 40, 0, 16)))))
    counted = {}
    for name in ("memcpy_htod_pinned", "memcpy_dtoh_pinned"):
        counted[name] = re.search(rf'^cricket_calls_total\{{procedure="{name}"\}} (\S+)$', text, re.M).group(1)
        counted[name, "timed"] = re.search(
            rf'^cricket_call_duration_seconds_count\{{procedure="{name}"\}} (\S+)$', text, re.M).group(1)
    for direction in ("htod", "dtoh"):
        counted[direction] = re.search(
            rf'^cricket_copied_bytes_total\{{direction="{direction}",path="shm"\}} (\S+)$', text, re.M).group(1)
    return seen, counted


def test_compiled_handler_and_twin_give_the_same_replies_and_counts(servers):
    compiled, twin = (_script(servers[name]) for name in IMPLEMENTATIONS)
    assert compiled[0] == twin[0]
    assert compiled[1] == twin[1]
    seen, counted = compiled
    outcome = {}
    for entry in seen:
        outcome.setdefault(entry[0], []).append(entry[1:])
    not_greeted = (curesult.NOT_INITIALIZED, "call HELLO before any other procedure")
    assert outcome["before HELLO"] == [(not_greeted, not_greeted)]
    assert all(r == (0, None) for *_, r in outcome["htod"])
    assert outcome["device after htod"] == [(True,)] and outcome["dtoh"] == [((0, None),)]
    assert outcome["region after dtoh"] == [(True, True)] and outcome["region untouched"] == [(True,)]
    for *_, (status, message) in outcome["region range"]:
        assert status == curesult.INVALID_VALUE and "outside the data area" in message
    for *_, (status, message) in outcome["device range"]:
        assert status == curesult.INVALID_VALUE and "not inside an allocation" in message
    for *_, (status, message) in outcome["no region"]:
        assert status == curesult.INVALID_VALUE and "not mapped in this session" in message
    for (status, message), in outcome["unknown stream"]:
        assert status == curesult.INVALID_HANDLE and "stream handle 987654" in message
    assert outcome["dtoh behind queued copies"] == [((0, None), True)]
    (after_htod, (status, message), after), = outcome["after an async error"]
    assert after_htod == (0, None) and after == (0, None)
    assert status == curesult.INVALID_VALUE and "not inside an allocation" in message
    # the calls of the main connection (the metrics were read before the one without HELLO)
    calls = {"memcpy_htod_pinned": 5 + 13 + 1, "memcpy_dtoh_pinned": 1 + 13 + 1 + 2}
    for name, count in calls.items():
        assert float(counted[name]) == count and float(counted[name, "timed"]) == count
    assert float(counted["htod"]) == 4096 + 16384 + 1 + 0 + SIZE + 64
    assert float(counted["dtoh"]) == 4096 + SIZE + 64

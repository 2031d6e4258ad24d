"""Address reservations of the driver's virtual memory management (cricket.server.vmm) at the
protocol, on an emu server with a session memory budget: a reservation counts against the budget
(a kernel could write all of it), CR_MEM_FREE refuses it, CR_VMM_FREE gives it back. The driver API
on top runs in tests/driver/test_memory_driver.py and examples/vmm_growable.cu."""
from __future__ import annotations

from cricket.client.api import connect
from cricket.cudafacts import curesult

MiB = 1 << 20


def test_reservations_count_against_the_session_budget(start_server):
    server = start_server("--backend", "emu", "--session-memory", "4M")
    with connect(server.address) as conn:
        stub = conn._stub
        assert stub.CR_VMM_RESERVE(8 * MiB).status == curesult.OUT_OF_MEMORY
        assert stub.CR_VMM_RESERVE(0).status == curesult.INVALID_VALUE
        reserved = stub.CR_VMM_RESERVE(2 * MiB)
        assert reserved.status == 0
        assert stub.CR_MEM_ALLOC(3 * MiB).status == curesult.OUT_OF_MEMORY
        assert stub.CR_MEM_FREE(reserved.ptr).status == curesult.INVALID_VALUE
        plain = stub.CR_MEM_ALLOC(MiB).ptr
        assert stub.CR_VMM_FREE(plain).status == curesult.INVALID_VALUE      # not a reservation
        assert stub.CR_VMM_FREE(reserved.ptr).status == 0
        assert stub.CR_MEM_ALLOC(3 * MiB).status == 0

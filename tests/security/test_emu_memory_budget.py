"""What an emu session takes besides its allocations counts against --session-memory too: its
modules' device variables, and the local memory of a running launch (per-thread frames, the frames
of recursive calls). Past the share: CUDA_ERROR_OUT_OF_MEMORY (cudaErrorMemoryAllocation) for that
session only. And the arena reserves address space for the share, not 16 GiB."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cricket.client.api import CudaError, connect
from cricket.cudafacts import curesult

from hostile_peers import SERVER_PATH, assert_back_to, warmed_up
from kernel_peers import RECURSION_PTX
from server_process import ServerProcess

MIB = 1 << 20
SHARE = 64 * MIB
HEAD = b".version 7.0\n.target sm_75\n.address_size 64\n"


def globals_ptx(nbytes: int) -> bytes:
    """A module with one device variable of ``nbytes`` and a kernel that writes its first word."""
    return HEAD + f""".global .align 4 .b8 big[{nbytes}];
.visible .entry touch(.param .u32 v)
{{
    .reg .b32 %r;
    .reg .b64 %a;
    ld.param.u32 %r, [v];
    mov.u64 %a, big;
    st.global.u32 [%a], %r;
    ret;
}}
""".encode()


# Each thread fills its 64 KiB local array with its value and sums it back: out[t] = 16384 * value.
LOCAL_PTX = HEAD + b""".visible .entry frames(.param .u64 out, .param .u32 value)
{
    .local .align 4 .b8 frame[65536];
    .reg .pred %more;
    .reg .b32 %v, %i, %x, %s, %t;
    .reg .b64 %a, %p, %o;
    ld.param.u32 %v, [value];
    mov.u32 %i, 0;
    mov.u32 %s, 0;
FILL:
    mul.wide.u32 %o, %i, 4;
    mov.u64 %a, frame;
    add.u64 %a, %a, %o;
    st.local.u32 [%a], %v;
    add.u32 %i, %i, 1;
    setp.lt.u32 %more, %i, 16384;
    @%more bra FILL;
    mov.u32 %i, 0;
SUM:
    mul.wide.u32 %o, %i, 4;
    mov.u64 %a, frame;
    add.u64 %a, %a, %o;
    ld.local.u32 %x, [%a];
    add.u32 %s, %s, %x;
    add.u32 %i, %i, 1;
    setp.lt.u32 %more, %i, 16384;
    @%more bra SUM;
    mov.u32 %t, %tid.x;
    mov.u32 %i, %ctaid.x;
    mov.u32 %x, %ntid.x;
    mad.lo.u32 %t, %i, %x, %t;
    ld.param.u64 %p, [out];
    mul.wide.u32 %o, %t, 4;
    add.u64 %p, %p, %o;
    st.global.u32 [%p], %s;
    ret;
}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server for this file's tests (each checks that it returns to its baseline)."""
    server = ServerProcess(tmp_path_factory.mktemp("budget"), "--backend", "emu", "--session-memory", str(SHARE),
                           env={"PYTHONPATH": SERVER_PATH})
    try:
        server.baseline = warmed_up(server)
        yield server
    finally:
        server.stop()


def _refused(call) -> CudaError:
    with pytest.raises(CudaError) as refused:
        call()
    assert refused.value.code == curesult.OUT_OF_MEMORY
    assert "--session-memory" in refused.value.message
    return refused.value


def test_module_variables_count_against_the_share(server):
    with connect(server.address) as session, connect(server.address) as other:
        module = session.load_module(globals_ptx(16 * MIB))
        module.get_function("touch").launch(1, 1, [7], sync=True)
        assert session.mem_get_info() == (SHARE - 16 * MIB, SHARE)
        error = _refused(lambda: session.load_module(globals_ptx(SHARE - 8 * MIB)))
        assert "device variables" in error.message
        assert session.mem_get_info() == (SHARE - 16 * MIB, SHARE)     # the refused module holds nothing
        assert other.load_module(globals_ptx(SHARE - 8 * MIB))           # the other's share is whole
        module.unload()
        assert session.mem_get_info() == (SHARE, SHARE)
    assert_back_to(server, server.baseline)


def test_a_launch_whose_local_memory_exceeds_the_share_gets_out_of_memory(server):
    with connect(server.address) as session, connect(server.address) as other:
        frames = session.load_module(LOCAL_PTX).get_function("frames")
        out = session.alloc(4 * 1024)
        held = session.alloc(SHARE - 16 * MIB)          # under 16 MiB left: 128 threads' frames fit
        frames.launch(1, 128, [out, 3], sync=True)
        assert (out.to_host(np.uint32)[:128] == 3 * 16384).all()
        error = _refused(lambda: frames.launch(4, 256, [out, 5], sync=True))   # 64 MiB of frames
        assert "local memory" in error.message
        assert session.mem_get_info()[0] == 16 * MIB - 4096    # nothing stays charged after a launch
        theirs = other.alloc(4 * 1024)                  # another session's frames are its own
        other.load_module(LOCAL_PTX).get_function("frames").launch(2, 256, [theirs, 9], sync=True)
        assert (theirs.to_host(np.uint32)[:512] == 9 * 16384).all()
        held.free()
        frames.launch(2, 256, [out, 6], sync=True)      # freed memory makes room for frames again
        assert (out.to_host(np.uint32)[:512] == 6 * 16384).all()
    assert_back_to(server, server.baseline)


def test_recursion_deeper_than_the_share_allows_gets_out_of_memory(server):
    with connect(server.address) as session:
        depth = session.load_module(RECURSION_PTX).get_function("depth")
        out = session.alloc(4 * 32)
        depth.launch(1, 32, [out, 40], sync=True)       # 40 frames of 1 KiB for each of 32 threads
        assert out.to_host(np.uint32).tolist() == [40 * 41 // 2] * 32
        held = session.alloc(SHARE - 2 * MIB)           # 2 MiB left; 300 levels need 32 x 300 KiB
        error = _refused(lambda: depth.launch(1, 32, [out, 300], sync=True))
        assert "local memory" in error.message
        held.free()
        depth.launch(1, 32, [out, 300], sync=True)      # with the share free again it fits
        assert out.to_host(np.uint32).tolist() == [300 * 301 // 2] * 32
    assert_back_to(server, server.baseline)


def _arena_mappings(pid: int) -> list[int]:
    """Sizes of the emu arenas mapped into a process (memfds named cricket-emu-arena)."""
    sizes = []
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        if "cricket-emu-arena" in line:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            sizes.append(hi - lo)
    return sizes


def test_the_arena_reserves_address_space_for_the_share_not_16_gib(server):
    with connect(server.address) as session:
        session.alloc(MIB)
        (size,) = _arena_mappings(server.process.pid)       # this session's: the others closed
        assert SHARE <= size <= 2 * SHARE, f"a {SHARE >> 20} MiB share reserved {size >> 20} MiB"

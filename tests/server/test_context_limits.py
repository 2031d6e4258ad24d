"""CR_CTX_SET_LIMIT through the Python API against a real emu server: the device malloc heap is
sized per session before a kernel uses it, and refused afterwards as CUDA does."""
import numpy as np
import pytest

from cricket.client.api import CudaError, connect
from cricket.cudafacts import curesult, limits

# each thread: blocks[tid] = malloc(bytes)
GRAB = b"""
.version 7.0
.target sm_75
.address_size 64
.extern .func (.param .b64 func_retval0) malloc(.param .b64 malloc_param_0);
.visible .entry grab(.param .u64 blocks, .param .u64 bytes)
{
    .reg .b32 %t;
    .reg .b64 %n, %p, %o, %q;
    ld.param.u64 %n, [bytes];
    {
    .param .b64 param0;
    st.param.b64 [param0], %n;
    .param .b64 retval0;
    call.uni (retval0), malloc, (param0);
    ld.param.b64 %p, [retval0];
    }
    mov.u32 %t, %tid.x;
    mul.wide.u32 %o, %t, 8;
    ld.param.u64 %q, [blocks];
    add.u64 %q, %q, %o;
    st.global.u64 [%q], %p;
    ret;
}
"""


def granted(conn, threads: int, size: int) -> int:
    out = conn.alloc(8 * threads)
    conn.load_module(GRAB).get_function("grab")(1, threads, out, np.uint64(size))
    return int(np.count_nonzero(out.to_host(np.uint64)))


def test_heap_size_is_set_per_session_and_fixed_once_used(emu_server):
    with connect(emu_server.address) as small, connect(emu_server.address) as default:
        small.set_limit(limits.MALLOC_HEAP_SIZE, 1 << 20)
        assert granted(small, 64, 64 << 10) == 16           # 1 MiB holds 16 blocks of 64 KiB
        assert granted(default, 64, 64 << 10) == 64         # 8 MiB by default holds them all
        with pytest.raises(CudaError) as e:
            small.set_limit(limits.MALLOC_HEAP_SIZE, 4 << 20)
        assert e.value.code == curesult.INVALID_VALUE


def test_a_limit_the_emulator_lacks_is_unsupported(emu_server):
    with connect(emu_server.address) as conn:
        with pytest.raises(CudaError) as e:
            conn.set_limit(5, 32)                            # CU_LIMIT_MAX_L2_FETCH_GRANULARITY
        assert e.value.code == curesult.UNSUPPORTED_LIMIT

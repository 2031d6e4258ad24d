"""The Python API refuses what it can check itself: a float given for an integer parameter (the
PTX says which parameter is which) and a block larger than the kernel can run, at the launch, not
at the next synchronising call. A real emu server; the kernel is PTX written here."""
import numpy as np
import pytest

from cricket.client.api import CudaError, connect
from cricket.client.kernel_args import KernelArgumentError
from cricket.client.local_server import LocalServer
from cricket.cudafacts import curesult

FILL = b"""
.version 7.0
.target sm_75
.address_size 64
.visible .entry fill(.param .u64 out, .param .f32 value, .param .u32 n)
{
    .reg .b64 %rd<4>;
    .reg .f32 %f<2>;
    .reg .b32 %r<3>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [out];
    ld.param.f32 %f1, [value];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd1, %rd1;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.f32 [%rd3], %f1;
DONE:
    ret;
}
"""


@pytest.fixture(scope="module")
def conn():
    with LocalServer(["emu"]) as server, connect(server.address, shared_memory=False) as c:
        yield c


def test_parameters_carry_their_kind_and_values_are_checked_against_it(conn):
    kernel = conn.load_module(FILL).get_function("fill")
    assert [p.kind for p in kernel.params] == [1, 2, 1]        # pointer, float, integer
    out = conn.alloc(4 * 32)
    with pytest.raises(KernelArgumentError, match="argument 2: the float 32.0 given for an integer"):
        kernel((1, 1, 1), (32, 1, 1), out, 2.5, 32.0)
    kernel((1, 1, 1), (32, 1, 1), out, 3, 32)                  # an int for the float: 3.0
    np.testing.assert_array_equal(out.to_host(np.float32), np.full(32, 3.0, np.float32))


def test_a_block_too_large_fails_at_the_launch(conn):
    kernel = conn.load_module(FILL).get_function("fill")
    out = conn.alloc(4 * 2048)
    with pytest.raises(CudaError) as err:
        kernel((1, 1, 1), (64, 32, 1), out, 1.0, 2048)         # asynchronous, still refused here
    assert err.value.code == curesult.INVALID_VALUE and "2048 threads" in str(err.value)
    with pytest.raises(CudaError, match="block dimension x is 2048, above the device's 1024"):
        kernel((1, 1, 1), (2048, 1, 1), out, 1.0, 2048)
    with pytest.raises(CudaError, match="grid dimension y is 0"):
        kernel((1, 0, 1), (32, 1, 1), out, 1.0, 32)
    conn.synchronize()                                          # nothing bad was queued
    kernel((1, 1, 1), (32, 1, 1), out, 1.0, 32)
    conn.synchronize()

"""Generic addresses of kernel parameters (``cvta.param``): what a ``__grid_constant__`` parameter
whose address is taken compiles to. Reads go to the launch's parameter buffer, bounds-checked."""
import numpy as np
import pytest

from cricket.backends.emu import pack_params
from cricket.backends.emu.errors import EmuError

PTX = """
.version 8.0
.target sm_75
.address_size 64
.visible .entry k(.param .align 8 .b8 s[24], .param .u64 out)
{
    .reg .b64 %rd<9>;
    .reg .b32 %r<3>;
    .reg .pred %p<2>;
    mov.b64 %rd1, s;
    cvta.param.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 8;
    add.s64 %rd4, %rd2, %rd3;
    ld.u64 %rd5, [%rd4];
    ld.param.u64 %rd6, [out];
    cvta.to.global.u64 %rd6, %rd6;
    mul.wide.u32 %rd7, %r1, 16;
    add.s64 %rd7, %rd6, %rd7;
    isspacep.param %p1, %rd4;
    selp.u64 %rd8, 1, 0, %p1;
    st.global.v2.u64 [%rd7], {%rd5, %rd8};
    ret;
}
"""


def _run(runner, threads):
    fn = runner.dev.load_module([PTX]).get_function("k")
    out = runner.zeros(2 * threads, np.uint64)
    s = np.array([11, 1 << 40, 2 ** 64 - 3], np.uint64)
    runner.dev.launch(fn, (1,), (threads,), 0, pack_params(fn, s.tobytes(), out))
    return s, out, runner.get(out, 2 * threads, np.uint64).reshape(threads, 2)


def test_each_thread_reads_the_parameter_through_a_generic_address(runner):
    s, out, got = _run(runner, 4)
    assert got[:3, 0].tolist() == s.tolist()
    assert got[3, 0] == out                                  # the next parameter, 24 bytes on
    assert (got[:, 1] == 1).all()                            # isspacep.param


def test_reading_past_the_parameters_faults(runner):
    with pytest.raises(EmuError) as e:
        _run(runner, 5)
    assert e.value.code == 700

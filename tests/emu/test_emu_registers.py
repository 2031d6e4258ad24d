"""The register file under divergence: copies of registers never share storage with the original."""
import numpy as np

from cricket.backends.emu import pack_params

KERNEL = """
.version 9.0
.target sm_75
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;
    .reg .pred %p<3>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;            // r1 and r2 start as copies of the same lane vector
    mov.u32 %r2, %r1;
    add.s32 %r3, %r1, 7;
    mov.u32 %r4, %r3;               // r4 copies a value computed in this block
    setp.lt.u32 %p1, %r1, 16;
    @%p1 bra SKIP;
    add.s32 %r2, %r2, 100;          // only lanes >= 16 change r2 and r3
    add.s32 %r3, %r3, 1000;
SKIP:
    setp.eq.u32 %p2, %r1, 3;
    @!%p2 bra DONE;
    mov.u32 %r4, 77;                // only lane 3 changes r4
DONE:
    mul.wide.u32 %rd2, %r1, 16;
    add.s64 %rd3, %rd1, %rd2;
    mov.u32 %r5, %tid.x;
    st.global.v4.u32 [%rd3], {%r5, %r2, %r3, %r4};
    ret;
}
"""


def test_partial_writes_do_not_leak_into_copies(make_runner):
    for lanes in (65536, 32):
        r = make_runner(max_lanes=lanes)
        fn = r.dev.load_module([KERNEL]).get_function("k")
        po = r.zeros(4 * 64, np.uint32)
        r.dev.launch(fn, (1,), (64,), 0, pack_params(fn, po))
        out = r.get(po, 4 * 64, np.uint32).reshape(64, 4)
        t = np.arange(64)
        assert np.array_equal(out[:, 0], t)                          # %tid.x itself untouched
        assert np.array_equal(out[:, 1], np.where(t < 16, t, t + 100))
        assert np.array_equal(out[:, 2], np.where(t < 16, t + 7, t + 1007))
        assert np.array_equal(out[:, 3], np.where(t == 3, 77, t + 7))

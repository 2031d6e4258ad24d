"""elect.sync (sm_90): one leader per warp among the lanes of the member mask that execute it."""
import numpy as np


PTX_ELECT = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry leaders(.param .u64 out, .param .u32 member)
{
    .reg .pred %me, %odd;
    .reg .b32 %t, %lane, %leader, %m, %v;
    .reg .b64 %p, %o;
    mov.u32 %t, %tid.x;
    mov.u32 %lane, %laneid;
    ld.param.u32 %m, [member];
    mov.u32 %leader, 99;
    and.b32 %v, %lane, 1;
    setp.eq.u32 %odd, %v, 1;
    @%odd elect.sync %leader|%me, %m;
    selp.u32 %v, 1000, 0, %me;
    add.u32 %v, %v, %leader;
    ld.param.u64 %p, [out];
    mul.wide.u32 %o, %t, 4;
    add.u64 %p, %p, %o;
    st.global.u32 [%p], %v;
    ret;
}
"""


def test_elect_sync_picks_one_leader_per_warp(make_runner):
    # the odd lanes of each warp elect among themselves (mask: every odd lane)
    r = make_runner()
    mod = r.dev.load_module([PTX_ELECT])
    po = r.zeros(96, np.uint32)
    r.dev.launch(mod.get_function("leaders"), (1,), (96,), 0,
                 np.array([po], np.uint64).tobytes() + np.uint32(0xAAAAAAAA).tobytes())
    got = r.get(po, 96, np.uint32).reshape(3, 32)
    for warp in got:
        assert warp[0::2].tolist() == [99] * 16                      # not taking part
        assert warp[1] == 1000 + 1 and warp[3::2].tolist() == [1] * 15   # lane 1 leads, all know it

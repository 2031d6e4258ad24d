"""Programmatic dependent launch (griddepcontrol, sm_90; CUB/Thrust 3.x kernels use it): the
emulator runs launches to completion in order, so a kernel that waits sees its predecessor's writes."""
import numpy as np

from cricket.backends.emu import pack_params

PTX = """
.version 9.0
.target sm_90
.address_size 64
.visible .entry producer(.param .u64 p)
{
    .reg .b32 %i, %v;
    .reg .b64 %base, %off, %ptr;
    mov.u32 %i, %tid.x;
    griddepcontrol.launch_dependents;
    ld.param.u64 %base, [p];
    mul.wide.u32 %off, %i, 4;
    add.s64 %ptr, %base, %off;
    mul.lo.s32 %v, %i, 3;
    st.global.u32 [%ptr], %v;
    ret;
}
.visible .entry consumer(.param .u64 p, .param .u64 q)
{
    .reg .b32 %i, %v;
    .reg .b64 %base, %off, %ptr;
    mov.u32 %i, %tid.x;
    mul.wide.u32 %off, %i, 4;
    griddepcontrol.wait;
    ld.param.u64 %base, [p];
    add.s64 %ptr, %base, %off;
    ld.global.u32 %v, [%ptr];
    add.s32 %v, %v, 1;
    ld.param.u64 %base, [q];
    add.s64 %ptr, %base, %off;
    st.global.u32 [%ptr], %v;
    ret;
}
"""


def test_a_dependent_grid_sees_its_predecessors_writes(two_batches):
    n = 96

    def body(r):
        mod = r.dev.load_module([PTX])
        p, q = r.zeros(n, np.uint32), r.zeros(n, np.uint32)
        prod, cons = mod.get_function("producer"), mod.get_function("consumer")
        r.dev.launch(prod, (1,), (n,), 0, pack_params(prod, p))
        r.dev.launch(cons, (1,), (n,), 0, pack_params(cons, p, q))
        return {"q": r.get(q, n, np.uint32)}

    assert np.array_equal(two_batches(body)["q"], np.arange(n, dtype=np.uint32) * 3 + 1)

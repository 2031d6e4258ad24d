"""Every instruction form of the measured nvcc census (docs: ptx-emulator.md) compiles, plus the extras
the issue names; out-of-scope features are refused by name."""
import pytest

from cricket.backends.emu import EmuError
from cricket.backends.emu.codegen import compile_kernel
from cricket.backends.emu.ptx.parser import parse
from cricket.backends.emu.ptx.program import Program

FORMS = """
abs.f32 %f1, %f2; abs.f64 %fd1, %fd2; abs.s32 %r1, %r2
add.f16 %rs1, %rs2, %rs3; add.f32 %f1, %f2, %f3; add.f64 %fd1, %fd2, %fd3; add.rn.f32 %f1, %f2, %f3
add.rn.f64 %fd1, %fd2, %fd3; add.s32 %r1, %r2, %r3; add.s64 %rd1, %rd2, %rd3; add.u64 %rd1, %rd2, 8
and.b32 %r1, %r2, 255; and.b64 %rd1, %rd2, %rd3; and.pred %p1, %p2, %p3
atom.global.add.f32 %f1, [%rd1], %f2; atom.global.add.u32 %r1, [%rd1], 1; atom.shared.add.u32 %r1, [%r2], 1
atom.global.add.f64 %fd1, [%rd1], %fd2; atom.global.cas.b32 %r1, [%rd1], %r2, %r3; atom.global.max.s32 %r1, [%rd1], %r2
atom.add.u32 %r1, [%rd1], 1; atom.add.f32 %f1, [%rd1], %f2; red.global.add.u32 [%rd1], %r2
atom.global.exch.b64 %rd1, [%rd2], %rd3; atom.global.inc.u32 %r1, [%rd1], %r2; atom.global.dec.u32 %r1, [%rd1], %r2
bar.sync 0; bar.warp.sync -1; barrier.sync 0; bar.red.popc.u32 %r1, 0, %p1; bar.red.and.pred %p1, 0, %p2
bfi.b64 %rd1, %rd2, %rd3, %r1, %r2; bfi.b32 %r1, %r2, %r3, 4, 8; bfe.u32 %r1, %r2, 4, 8; bfe.s64 %rd1, %rd2, %r1, %r2
brev.b32 %r1, %r2; clz.b32 %r1, %r2; popc.b32 %r1, %r2; popc.b64 %r1, %rd2; bfind.u32 %r1, %r2
copysign.f32 %f1, %f2, %f3
cvt.rn.f16.f32 %rs1, %f1; cvt.rn.f32.f64 %f1, %fd1; cvt.rn.f32.s16 %f1, %rs1; cvt.rn.f32.s32 %f1, %r1
cvt.rn.f64.s64 %fd1, %rd1; cvt.rni.f32.f32 %f1, %f2; cvt.rni.s32.f32 %r1, %f1; cvt.rzi.f32.f32 %f1, %f2
cvt.rzi.s32.f32 %r1, %f1; cvt.s16.s8 %rs1, %rs2; cvt.s64.s32 %rd1, %r1; cvt.sat.f32.f32 %f1, %f2
cvt.u32.u64 %r1, %rd1; cvt.u64.u32 %rd1, %r1; cvt.rmi.f32.f32 %f1, %f2; cvt.u64.u16 %rd1, %rs1
cvt.rn.f64.s32 %fd1, %r1; cvt.f32.f16 %f1, %rs1; cvt.rn.bf16.f32 %rs1, %f1; cvt.f32.bf16 %f1, %rs1
cvta.to.global.u64 %rd1, %rd2; cvta.local.u64 %rd1, %rd2; cvta.shared.u64 %rd1, %rd2; cvta.global.u64 %rd1, %rd2
cvta.to.shared.u64 %rd1, %rd2; isspacep.shared %p1, %rd1; isspacep.global %p1, %rd1
div.s32 %r1, %r2, %r3; div.s64 %rd1, %rd2, %rd3; div.u32 %r1, %r2, %r3; div.rn.f32 %f1, %f2, %f3
div.approx.f32 %f1, %f2, %f3; div.full.f32 %f1, %f2, %f3; div.rn.f64 %fd1, %fd2, %fd3
ex2.approx.ftz.f32 %f1, %f2; lg2.approx.f32 %f1, %f2; rcp.approx.ftz.f32 %f1, %f2; rcp.rn.f64 %fd1, %fd2
rcp.approx.ftz.f64 %fd1, %fd2; sin.approx.f32 %f1, %f2; cos.approx.ftz.f32 %f1, %f2; tanh.approx.f32 %f1, %f2
rsqrt.approx.f32 %f1, %f2; sqrt.rn.f32 %f1, %f2; sqrt.rn.f64 %fd1, %fd2; sqrt.approx.f32 %f1, %f2
fma.rm.f32 %f1, %f2, %f3, %f4; fma.rn.f32 %f1, %f2, %f3, %f4; fma.rn.f64 %fd1, %fd2, %fd3, %fd4
fma.rn.ftz.sat.f32 %f1, %f2, %f3, %f4; mad.rn.f32 %f1, %f2, %f3, %f4
ld.global.f32 %f1, [%rd1]; ld.global.nc.u32 %r1, [%rd1]; ld.global.u8 %rs1, [%rd1]; ld.global.u16 %rs1, [%rd1]
ld.local.u32 %r1, [%rd1]; ld.shared.f32 %f1, [%r1]; ld.shared.u32 %r1, [%r2+4]; ld.f32 %f1, [%rd1]
ld.global.nc.v2.f64 {%fd1, %fd2}, [%rd1]; ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+16]; ldu.global.f32 %f1, [%rd1]
ld.volatile.global.u32 %r1, [%rd1]; ld.relaxed.gpu.global.u32 %r1, [%rd1]; ld.global.L1::no_allocate.u32 %r1, [%rd1]
mad.lo.s32 %r1, %r2, %r3, %r4; mad.wide.u32 %rd1, %r2, %r3, %rd4; mad.hi.u32 %r1, %r2, %r3, %r4
mad.lo.cc.u32 %r1, %r2, %r3, %r4; madc.hi.cc.u32 %r1, %r2, %r3, %r4; madc.lo.u32 %r1, %r2, %r3, %r4
max.s32 %r1, %r2, %r3; max.u32 %r1, %r2, %r3; min.f32 %f1, %f2, %f3; min.f64 %fd1, %fd2, %fd3; min.s32 %r1, %r2, %r3
mov.b32 %r1, %f1; mov.b64 %rd1, %fd1; mov.f32 %f1, 0f3F800000; mov.f64 %fd1, 0d3FF0000000000000; mov.pred %p1, %p2
mov.u32 %r1, %tid.x; mov.u64 %rd1, %rd2; mov.b64 {%r1, %r2}, %rd1; mov.b64 %rd1, {%r1, %r2}; mov.b32 {%rs1, %rs2}, %r1
mov.u32 %r1, %laneid; mov.u32 %r1, %lanemask_lt; mov.u64 %rd1, %clock64; mov.u32 %r1, %nctaid.y; mov.u32 %r1, %warpid
mul.f32 %f1, %f2, %f3; mul.f64 %fd1, %fd2, %fd3; mul.lo.s32 %r1, %r2, %r3; mul.lo.s64 %rd1, %rd2, %rd3
mul.rn.f32 %f1, %f2, %f3; mul.wide.s32 %rd1, %r2, 4; mul.wide.u16 %r1, %rs1, %rs2; mul.wide.u32 %rd1, %r1, %r2
mul.hi.s32 %r1, %r2, %r3; mul.hi.u64 %rd1, %rd2, %rd3; mul24.lo.s32 %r1, %r2, %r3; mad24.lo.u32 %r1, %r2, %r3, %r4
neg.f32 %f1, %f2; neg.s32 %r1, %r2; neg.f64 %fd1, %fd2; not.pred %p1, %p2; not.b32 %r1, %r2; cnot.b32 %r1, %r2
or.b32 %r1, %r2, %r3; or.b64 %rd1, %rd2, %rd3; or.pred %p1, %p2, %p3; xor.b32 %r1, %r2, %r3; xor.pred %p1, %p2, %p3
rem.s32 %r1, %r2, %r3; rem.u32 %r1, %r2, %r3; rem.s64 %rd1, %rd2, %rd3
selp.b32 %r1, %r2, %r3, %p1; selp.f32 %f1, %f2, %f3, %p1; selp.f64 %fd1, %fd2, %fd3, %p1; selp.u64 %rd1, %rd2, 0, %p1
setp.eq.s32 %p1, %r1, %r2; setp.ne.u32 %p1, %r1, 0; setp.lt.u64 %p1, %rd1, %rd2; setp.geu.f32 %p1, %f1, %f2
setp.gtu.f32 %p1, %f1, %f2; setp.ltu.f64 %p1, %fd1, %fd2; setp.neu.f32 %p1, %f1, %f2; setp.le.f32 %p1, %f1, %f2
setp.eq.b32 %p1, %r1, 1; setp.eq.b64 %p1, %rd1, %rd2; setp.hi.u32 %p1, %r1, %r2; setp.nan.f32 %p1, %f1, %f2
set.lt.u32.f32 %r1, %f1, %f2; slct.s32.s32 %r1, %r2, %r3, %r4; sad.u32 %r1, %r2, %r3, %r4
shfl.sync.down.b32 %r1|%p1, %r2, 1, 31, -1; shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31, -1; shfl.sync.idx.b32 %r1, %r2, 0, 31, -1
shfl.sync.up.b32 %r1|%p1, %r2, 1, 0, -1; vote.sync.any.pred %p1, %p2, -1; vote.sync.ballot.b32 %r1, %p1, -1
vote.sync.all.pred %p1, !%p2, -1; vote.sync.uni.pred %p1, %p2, -1; match.any.sync.b32 %r1, %r2, -1
match.all.sync.b32 %r1|%p1, %r2, -1; redux.sync.add.s32 %r1, %r2, -1; redux.sync.max.u32 %r1, %r2, -1; activemask.b32 %r1
shl.b32 %r1, %r2, 2; shl.b64 %rd1, %rd2, %r1; shr.s32 %r1, %r2, 31; shr.u32 %r1, %r2, %r3; shr.u64 %rd1, %rd2, 3
shf.l.wrap.b32 %r1, %r2, %r3, %r4; shf.r.clamp.b32 %r1, %r2, %r3, 5; lop3.b32 %r1, %r2, %r3, %r4, 0x96
prmt.b32 %r1, %r2, %r3, 0x3210; prmt.b32.f4e %r1, %r2, %r3, %r4; testp.finite.f32 %p1, %f1; testp.subnormal.f64 %p1, %fd1
add.cc.u32 %r1, %r2, %r3; addc.u32 %r1, %r2, %r3; addc.cc.u32 %r1, %r2, %r3; sub.cc.u32 %r1, %r2, %r3; subc.u32 %r1, %r2, %r3
add.ftz.f32 %f1, %f2, %f3; mul.ftz.f32 %f1, %f2, %f3; max.ftz.f32 %f1, %f2, %f3; setp.lt.ftz.f32 %p1, %f1, %f2
dp4a.u32.u32 %r1, %r2, %r3, %r4; dp4a.s32.s32 %r1, %r2, %r3, %r4
st.global.f32 [%rd1], %f1; st.global.u16 [%rd1], %rs1; st.global.u64 [%rd1], %rd2; st.local.u32 [%rd1], %r1
st.local.v4.u32 [%rd1], {%r1, %r2, %r3, %r4}; st.shared.f32 [%r1], %f1; st.u8 [%rd1], %rs1; st.local.v2.u32 [%rd1], {%r1, %r2}
st.volatile.global.u32 [%rd1], %r1; st.global.v2.f64 [%rd1], {%fd1, %fd2}
sub.f32 %f1, %f2, %f3; sub.s32 %r1, %r2, %r3; sub.s64 %rd1, %rd2, %rd3
membar.gl; membar.cta; fence.acq_rel.gpu; nanosleep.u32 100; prefetch.global.L2 [%rd1]
cp.async.ca.shared.global [%r1], [%rd1], 4; cp.async.commit_group; cp.async.wait_group 0; cp.async.wait_all
add.f16x2 %r1, %r2, %r3; fma.rn.f16x2 %r1, %r2, %r3, %r4; mul.f16x2 %r1, %r2, %r3; neg.f16x2 %r1, %r2
add.rn.bf16 %rs1, %rs2, %rs3; fma.rn.bf16x2 %r1, %r2, %r3, %r4; max.f16x2 %r1, %r2, %r3; cvt.rn.f16x2.f32 %r1, %f1, %f2
bmsk.clamp.b32 %r1, %r2, %r3; szext.wrap.s32 %r1, %r2, %r3
ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5]; movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2
mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2}, {%r3}, {%f5, %f6, %f7, %f4}
wmma.load.a.sync.aligned.row.m8n8k4.f64 {%fd1}, [%rd1], %r1; cvt.rna.tf32.f32 %r1, %f1
tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}]; tex.a2d.v4.s32.f32 {%r1, %r2, %r3, %r4}, [%rd1, {%r5, %f5, %f6, %f6}]
tex.level.3d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6, %f7, %f7}], %f5; tex.cube.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6, %f7, %f7}]
tld4.r.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}]; txq.width.b32 %r1, [%rd1]; txq.level.height.b32 %r1, [%rd1], %r2
suld.b.1d.v4.b32.trap {%r1, %r2, %r3, %r4}, [%rd1, {%r5}]; sust.b.2d.b16.zero [%rd1, {%r5, %r6}], %rs1
sust.p.2d.v4.b32.clamp [%rd1, {%r5, %r6}], {%r1, %r2, %r3, %r4}; suq.height.b32 %r1, [%rd1]; istypep.texref %p1, %rd1
trap; brkpt; exit
"""


def kernel_text(instrs: list[str]) -> str:
    regs = [".reg .b32 %r<8>;", ".reg .b64 %rd<8>;", ".reg .f32 %f<8>;", ".reg .f64 %fd<8>;", ".reg .pred %p<8>;",
            ".reg .b16 %rs<8>;"]
    body = "\n".join(f"    {i};" for i in instrs)
    return (".version 9.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 k_p)\n{\n    "
            + "\n    ".join(regs) + "\n" + body + "\n    ret;\n}\n")


def all_forms() -> list[str]:
    out = []
    for line in FORMS.strip().splitlines():
        out += [x.strip() for x in line.split(";") if x.strip()]
    return out


def test_census_instruction_forms_compile():
    forms = all_forms()
    assert len(forms) > 230
    prog = Program([parse(kernel_text(forms))])
    prog.check_supported()
    ck = compile_kernel(prog.kernel("k"))
    assert len(ck.instrs) >= len(forms)


@pytest.mark.parametrize("instr,feature", [
    ("wgmma.fence.sync.aligned", "tensor-core"),
    ("multimem.ld_reduce.relaxed.sys.global.add.u32 %r1, [%rd1]", "multimem"),
    ("setmaxnreg.inc.sync.aligned.u32 240", "setmaxnreg"),
])
def test_out_of_scope_features_are_refused_by_name(instr, feature):
    prog = Program([parse(kernel_text([instr]))])
    with pytest.raises(EmuError) as e:
        prog.check_supported()
    assert e.value.code == 801 and feature in str(e.value)

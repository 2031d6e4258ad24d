"""The PTX front end: directives, declarations, scopes, initialisers, and the kernel IR."""
import pytest

from cricket.backends.emu import EmuError
from cricket.backends.emu.ptx.ast import Addr, Pair, Reg, Sym
from cricket.backends.emu.ptx.parser import parse
from cricket.backends.emu.ptx.program import Program

SAMPLE = r"""
//
// comment
.version 9.0
.target sm_75
.address_size 64

.global .align 4 .b8 table[8] = {1, 2, 3, 4, 255, 0, 0, 128};
.global .align 8 .u64 ptr_to_table = generic(table);
.extern .shared .align 16 .b8 dyn[];

.visible .entry k(
    .param .u64 k_param_0,
    .param .align 8 .b8 k_param_1[40]
)
.maxntid 256, 1, 1
{
    .reg .pred %p<3>;
    .reg .b32 %r<5>;
    .reg .b64 %rd<3>;
    .loc 1 7 3
    ld.param.u64 %rd1, [k_param_0];
    ld.param.v2.u16 {%rs1, %rs2}, [k_param_1+36];
    {
    .reg .b32 inner;
    mov.u32 inner, %tid.x;
    }
    {
    .reg .b32 inner;
    shfl.sync.down.b32 inner|%p1, %r1, 1, 31, -1;
    }
$L__BB0_1:
    @!%p1 bra $L__BB0_1;
    ret;
}
.file 1 "src/k.cu"
"""


def test_parses_directives_variables_and_entry():
    text = SAMPLE.replace("    .reg .b64 %rd<3>;", "    .reg .b64 %rd<3>;\n    .reg .b16 %rs<3>;")
    m = parse(text)
    assert m.version == (9, 0) and m.target == ["sm_75"] and m.files == {1: "src/k.cu"}
    assert m.variables["table"].init == [1, 2, 3, 4, 255, 0, 0, 128]
    assert m.variables["ptr_to_table"].init == [("addr", "table", 0)]
    assert m.variables["dyn"].count == 0
    fn = m.functions["k"]
    assert [p.name for p in fn.params] == ["k_param_0", "k_param_1"]
    assert fn.params[1].align == 8 and fn.params[1].count == 40
    assert fn.directives["maxntid"] == [256, 1, 1]
    assert len([r for r in fn.regs if r[0] == "r" and r[1:].isdigit()]) == 5
    body = [s for s in fn.body if hasattr(s, "op")]
    assert body[0].loc == (1, 7)
    assert body[1].operands[1] == Addr(Sym("k_param_1"), 36)
    # the two scoped "inner" registers are distinct
    movs = [s for s in body if s.op == "mov"]
    shfl = [s for s in body if s.op == "shfl"][0]
    assert isinstance(shfl.operands[0], Pair)
    assert movs[0].operands[0] != shfl.operands[0].first
    bra = [s for s in body if s.op == "bra"][0]
    assert bra.guard == (Reg("p1"), True)


def test_kernel_ir_lays_out_parameters_by_natural_alignment():
    text = SAMPLE.replace("    .reg .b64 %rd<3>;", "    .reg .b64 %rd<3>;\n    .reg .b16 %rs<3>;")
    prog = Program([parse(text)])
    ir = prog.kernel("k")
    assert [(p.offset, p.size) for p in ir.params] == [(0, 8), (8, 40)]
    assert ir.param_size == 48
    kinds = [b.kind for b in ir.blocks]
    assert "cbr" in kinds and kinds[-1] == "exit"


def test_undeclared_register_is_invalid_ptx():
    with pytest.raises(EmuError) as e:
        parse(".version 9.0\n.target sm_75\n.address_size 64\n.entry k() { mov.u32 %r1, 1; ret; }")
    assert e.value.code == 218 and "%r1" in str(e.value)


def test_only_64_bit_addressing_is_accepted():
    with pytest.raises(EmuError) as e:
        parse(".version 9.0\n.target sm_75\n.address_size 32\n")
    assert e.value.code == 218


def test_all_fixture_ptx_parses_and_compiles(ptx):
    from pathlib import Path
    from cricket.backends.emu.codegen import compile_kernel
    files = sorted(Path(__file__).parent.joinpath("ptx").glob("*.ptx"))
    assert len(files) >= 20
    for f in files:
        if f.name.startswith("rdc_"):
            continue
        prog = Program([parse(f.read_text())])
        prog.check_supported()
        for name in prog.entries:
            ck = compile_kernel(prog.kernel(name))
            assert ck.fns and "def b0(X, L)" in ck.source()

"""Large modules parse function bodies on first use (CuPy's libcub PTX is 21 MB, 383 kernels): the
kernels built that way equal those of a full parse, and an unsupported instruction is still refused
with its name, when the kernel is first asked for."""
import re
from pathlib import Path

import numpy as np
import pytest

from cricket.backends.emu import pack_params
from cricket.backends.emu.errors import EmuError
from cricket.backends.emu.ptx import parser
from cricket.backends.emu.ptx.program import Program

PTX_DIR = Path(__file__).resolve().parent / "ptx"

# every committed fixture; the -rdc=true halves are linked together
FIXTURES = [[p.name] for p in sorted(PTX_DIR.glob("*.ptx")) if ".rdc." not in p.name] + \
    [sorted(p.name for p in PTX_DIR.glob("*.rdc.ptx"))]


def kernel_shapes(prog: Program) -> dict:
    """Each kernel's IR as text, with the names of scoped declarations (``name$sN``, numbered per
    parse) renumbered in order of appearance. Source lines are left out: a full parse carries the
    last ``.loc`` into a following function that has none, a body parsed alone starts without."""
    out = {}
    for name in prog.entries:
        ir = prog.kernel(name)
        text = repr((ir.params, ir.param_size, ir.regs, ir.shared_static, ir.local_size, [(n, y.space, y.offset, y.size) for n, y in ir.symbols.items()],
                     [(b.kind, b.target, b.fallthrough, [i.text() for i in b.instrs]) for b in ir.blocks]))
        numbers: dict[str, str] = {}
        out[name] = re.sub(r"(\w+)\$s\d+", lambda m: numbers.setdefault(m.group(), f"{m.group(1)}$S{len(numbers)}"),
                           text)
    return out


@pytest.mark.parametrize("fixtures", FIXTURES, ids="+".join)
def test_lazily_parsed_kernels_equal_fully_parsed_ones(monkeypatch, fixtures):
    texts = [(PTX_DIR / f).read_text() for f in fixtures]
    eager = Program([parser.parse(t) for t in texts])
    monkeypatch.setattr(parser, "LAZY_BODIES", 0)
    lazy = Program([parser.parse(t) for t in texts])
    assert lazy.lazy and not eager.lazy
    assert lazy.entries == eager.entries
    assert kernel_shapes(lazy) == kernel_shapes(eager)


def test_split_keeps_line_numbers_and_leaves_initialisers_and_sections():
    text = (".version 9.0\n.target sm_75\n.address_size 64\n"
            ".global .align 4 .b8 tbl[3] = {1, 2, 3};\n"
            ".visible .entry k(.param .u64 p)\n.maxntid 64\n{\n  .reg .b32 %r<2>;\n  { .reg .b32 %t; }\n  ret;\n}\n"
            ".section .debug_str { .b8 65 }\n")
    skeleton, bodies = parser.split_bodies(text)
    assert skeleton.count("\n") == text.count("\n")
    assert "{1, 2, 3}" in skeleton and ".debug_str { .b8 65 }" in skeleton
    assert len(bodies) == 1 and bodies[0][1] == 7 and "ret;" in bodies[0][0]


UNSUPPORTED = """
.version 9.0
.target sm_75
.address_size 64
.visible .entry fine(.param .u64 p)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd1, %rd1, %rd2;
    st.global.u32 [%rd1], %r1;
    ret;
}
.visible .entry tensor(.param .u64 p)
{
    .reg .b32 %r<9>;
    wgmma.fence.sync.aligned;
    ret;
}
"""


def test_a_large_module_refuses_an_unsupported_kernel_when_it_is_asked_for(monkeypatch, runner):
    monkeypatch.setattr(parser, "LAZY_BODIES", 0)
    mod = runner.dev.load_module([UNSUPPORTED])          # loads: the bodies are not read yet
    fn = mod.get_function("fine")
    out = runner.zeros(32, np.uint32)
    runner.dev.launch(fn, (1,), (32,), 0, pack_params(fn, out))
    assert np.array_equal(runner.get(out, 32, np.uint32), np.arange(32, dtype=np.uint32))
    with pytest.raises(EmuError) as info:
        mod.get_function("tensor")
    assert info.value.code == 801 and "tensor-core" in str(info.value)
    with pytest.raises(EmuError) as info:
        mod.get_function("missing")
    assert info.value.code == 500 and "fine" in str(info.value)

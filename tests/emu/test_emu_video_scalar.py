"""The scalar video instructions (vadd, vsub, vabsdiff, vmin, vmax, vshl, vshr, vmad, vset), form by
form: selectors, saturation, secondary operations, merges, vmad's negations, .po and scaling, each
checked against the PTX ISA's pseudo-code written out here for one value at a time."""
import itertools

import numpy as np
import pytest

from cricket.backends.emu import EmuError, pack_params

EDGES = [0, 1, 2, 31, 32, 33, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF,
         0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF, 0x12345678, 0x89ABCDEF, 0xFF7F80FE]
PARTS = {"b0": (0, 8), "b1": (8, 8), "b2": (16, 8), "b3": (24, 8), "h0": (0, 16), "h1": (16, 16)}


def operands(seed=7):
    rng = np.random.default_rng(seed)
    triples = [(a, b, c) for a, b in itertools.product(EDGES, EDGES) for c in (0, 0xDEADBEEF)][::3]
    triples += [tuple(int(x) for x in rng.integers(0, 1 << 32, 3)) for _ in range(200)]
    triples += [(int(a), int(b) % 40, 5) for a, b in zip(rng.integers(0, 1 << 32, 64), rng.integers(0, 1 << 32, 64))]
    return [np.array(col, np.uint32) for col in zip(*triples)]


# ---- the ISA's pseudo-code, one value at a time ------------------------------------------------
def part(x, signed, sel):
    shift, bits = PARTS[sel] if sel else (0, 32)
    v = (x >> shift) & ((1 << bits) - 1)
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def clamp(v, signed, bits):
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return max(lo, min(hi, v))


def reference(op, types, a, b, c, asel=None, bsel=None, dsel=None, sat=False, secop=None, mode=None, cmp=None):
    dt, at, bt = (t == "s32" for t in types)
    ta = part(a, at, asel)
    tb = part(b, bt if op not in ("vshl", "vshr") else False, bsel)
    if op in ("vshl", "vshr"):
        tb = min(tb, 32) if mode == "clamp" else tb & 31
    tmp = {"vadd": lambda: ta + tb, "vsub": lambda: ta - tb, "vabsdiff": lambda: abs(ta - tb),
           "vmin": lambda: min(ta, tb), "vmax": lambda: max(ta, tb), "vshl": lambda: ta << tb,
           "vshr": lambda: ta >> tb,
           "vset": lambda: int({"eq": ta == tb, "ne": ta != tb, "lt": ta < tb, "le": ta <= tb,
                                "gt": ta > tb, "ge": ta >= tb}[cmp])}[op]()
    if sat:
        tmp = clamp(tmp, dt, PARTS[dsel][1] if dsel else 32)
    if dsel:
        shift, bits = PARTS[dsel]
        mask = ((1 << bits) - 1) << shift
        return ((tmp << shift) & mask) | (c & ~mask & 0xFFFFFFFF)
    if secop:
        cc = part(c, dt, None)
        tmp = {"add": tmp + cc, "min": min(tmp, cc), "max": max(tmp, cc)}[secop]
    return tmp & 0xFFFFFFFF


def reference_vmad(types, a, b, c, asel=None, bsel=None, neg=(False, False, False), po=False, scale=0, sat=False):
    _, at, bt = (t == "s32" for t in types)
    ta, tb = part(a, at, asel), part(b, bt, bsel)
    signed_final = at or bt or (neg[0] != neg[1]) or neg[2]
    prod = ta * tb
    if neg[0] != neg[1]:
        prod = -prod
    cc = part(c, signed_final, None)
    if neg[2]:
        cc = -cc
    r = (prod + cc + (1 if po else 0)) >> scale
    if sat:
        r = clamp(r, signed_final, 32)
    return r & 0xFFFFFFFF


# ---- the forms under test ------------------------------------------------------------------------
TYPES = [("u32", "u32", "u32"), ("s32", "s32", "s32"), ("s32", "u32", "s32"), ("u32", "s32", "u32")]
FORMS = []      # (ptx instruction, reference kwargs)
for op in ("vadd", "vsub", "vabsdiff", "vmin", "vmax"):
    for types in TYPES:
        FORMS.append((op, types, {}))
        FORMS.append((op, types, {"sat": True}))
    FORMS.append((op, TYPES[1], {"asel": "b1", "bsel": "h1", "sat": True}))
    FORMS.append((op, TYPES[2], {"asel": "h0", "bsel": "b3", "secop": "add"}))
    FORMS.append((op, TYPES[1], {"sat": True, "secop": "min"}))
    FORMS.append((op, TYPES[0], {"secop": "max"}))
    FORMS.append((op, TYPES[1], {"dsel": "h1", "sat": True}))
    FORMS.append((op, TYPES[0], {"dsel": "b2", "sat": True, "asel": "b0"}))
    FORMS.append((op, TYPES[3], {"dsel": "b0"}))
for op in ("vshl", "vshr"):
    for mode in ("clamp", "wrap"):
        FORMS.append((op, ("s32", "s32", "u32"), {"mode": mode}))
        FORMS.append((op, ("u32", "u32", "u32"), {"mode": mode, "sat": True}))
        FORMS.append((op, ("s32", "s32", "u32"), {"mode": mode, "sat": True, "secop": "add"}))
        FORMS.append((op, ("u32", "s32", "u32"), {"mode": mode, "asel": "h1", "bsel": "b0", "dsel": "h0"}))
for cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
    FORMS.append(("vset", ("u32", "s32", "u32"), {"cmp": cmp}))
    FORMS.append(("vset", ("u32", "u32", "s32"), {"cmp": cmp, "asel": "b3", "bsel": "h0", "secop": "add"}))
    FORMS.append(("vset", ("u32", "s32", "s32"), {"cmp": cmp, "dsel": "b1"}))


def ptx_of(op, types, kw):
    mods = [op] + ([] if op == "vset" else [types[0]]) + list(types[1:])
    if kw.get("cmp"):
        mods.append(kw["cmp"])
    if kw.get("sat"):
        mods.append("sat")
    if kw.get("mode"):
        mods.append(kw["mode"])
    if kw.get("secop"):
        mods.append(kw["secop"])
    d = "%d" + (f".{kw['dsel']}" if kw.get("dsel") else "")
    a = "%a" + (f".{kw['asel']}" if kw.get("asel") else "")
    b = "%b" + (f".{kw['bsel']}" if kw.get("bsel") else "")
    tail = ", %c" if kw.get("secop") or kw.get("dsel") else ""
    return f"{'.'.join(mods)} {d}, {a}, {b}{tail};"


VMAD_FORMS = [
    (("u32", "u32", "u32"), {}), (("u32", "u32", "u32"), {"sat": True}),
    (("s32", "s32", "s32"), {"sat": True}), (("s32", "s32", "u32"), {"neg": (False, False, True), "sat": True}),
    (("s32", "u32", "u32"), {"neg": (True, False, False)}), (("s32", "s32", "s32"), {"neg": (True, True, False)}),
    (("u32", "u32", "u32"), {"po": True, "scale": 7}), (("s32", "s32", "s32"), {"scale": 15, "sat": True}),
    (("u32", "u32", "u32"), {"asel": "h0", "bsel": "h0", "scale": 15}),
    (("s32", "s32", "s32"), {"asel": "b1", "bsel": "h1", "neg": (False, True, False), "sat": True}),
    (("s32", "u32", "s32"), {"po": True, "sat": True}),
]


def vmad_ptx(types, kw):
    mods = ["vmad", *types] + (["po"] if kw.get("po") else []) + (["sat"] if kw.get("sat") else [])
    if kw.get("scale"):
        mods.append(f"shr{kw['scale']}")
    neg = kw.get("neg", (False, False, False))
    a = ("-" if neg[0] else "") + "%a" + (f".{kw['asel']}" if kw.get("asel") else "")
    b = ("-" if neg[1] else "") + "%b" + (f".{kw['bsel']}" if kw.get("bsel") else "")
    c = ("-" if neg[2] else "") + "%c"
    return f"{'.'.join(mods)} %d, {a}, {b}, {c};"


def module_text(instructions):
    kernels = []
    for k, ins in enumerate(instructions):
        kernels.append(f"""
.visible .entry k{k}(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd, .param .u32 n)
{{
    .reg .pred %out;
    .reg .b32 %a, %b, %c, %d, %i, %n;
    .reg .b64 %p, %o;
    mov.u32 %i, %ctaid.x;
    mad.lo.u32 %i, %i, 128, %tid.x;
    ld.param.u32 %n, [n];
    setp.ge.u32 %out, %i, %n;
    @%out bra DONE;
    mul.wide.u32 %o, %i, 4;
    ld.param.u64 %p, [pa];
    add.u64 %p, %p, %o;
    ld.global.u32 %a, [%p];
    ld.param.u64 %p, [pb];
    add.u64 %p, %p, %o;
    ld.global.u32 %b, [%p];
    ld.param.u64 %p, [pc];
    add.u64 %p, %p, %o;
    ld.global.u32 %c, [%p];
    mov.u32 %d, 0x5A5A5A5A;
    {ins}
    ld.param.u64 %p, [pd];
    add.u64 %p, %p, %o;
    st.global.u32 [%p], %d;
DONE:
    ret;
}}""")
    return ".version 7.0\n.target sm_75\n.address_size 64\n" + "\n".join(kernels)


def run_all(make_runner, instructions):
    a, b, c = operands()
    n = len(a)
    r = make_runner(max_lanes=512)
    mod = r.dev.load_module([module_text(instructions)])
    pa, pb, pc = r.put(a), r.put(b), r.put(c)
    pd = r.zeros(n, np.uint32)
    results = []
    for k in range(len(instructions)):
        fn = mod.get_function(f"k{k}")
        r.dev.launch(fn, ((n + 127) // 128,), (128,), 0, pack_params(fn, pa, pb, pc, pd, n))
        results.append(r.get(pd, n, np.uint32))
    return (a, b, c), results


def test_scalar_video_forms_follow_the_isa(make_runner):
    (a, b, c), results = run_all(make_runner, [ptx_of(*f) for f in FORMS])
    for (op, types, kw), got in zip(FORMS, results):
        want = [reference(op, types, int(x), int(y), int(z), **kw) for x, y, z in zip(a, b, c)]
        bad = np.flatnonzero(got != np.array(want, np.uint32))
        assert not len(bad), (f"{ptx_of(op, types, kw)} a={a[bad[0]]:#x} b={b[bad[0]]:#x} c={c[bad[0]]:#x}: "
                              f"got {got[bad[0]]:#x}, want {want[bad[0]]:#x}")


def test_vmad_negations_plus_one_and_scaling_follow_the_isa(make_runner):
    (a, b, c), results = run_all(make_runner, [vmad_ptx(*f) for f in VMAD_FORMS])
    for (types, kw), got in zip(VMAD_FORMS, results):
        want = [reference_vmad(types, int(x), int(y), int(z), **kw) for x, y, z in zip(a, b, c)]
        bad = np.flatnonzero(got != np.array(want, np.uint32))
        assert not len(bad), (f"{vmad_ptx(types, kw)} a={a[bad[0]]:#x} b={b[bad[0]]:#x} c={c[bad[0]]:#x}: "
                              f"got {got[bad[0]]:#x}, want {want[bad[0]]:#x}")


@pytest.mark.parametrize("ins", [
    "vadd.u32.u32 %d, %a, %b;",                         # a type missing
    "vshl.s32.s32.s32.clamp %d, %a, %b;",               # the shift amount is .u32
    "vshr.u32.u32.u32 %d, %a, %b;",                     # no .clamp/.wrap
    "vset.u32.u32 %d, %a, %b;",                         # no comparison
    "vmin.s32.s32.s32.add %d.h0, %a, %b, %c;",          # a secondary operation and a merge
    "vmad.s32.s32.s32.po %d, -%a, %b, %c;",             # .po with a negation
    "vadd.s32.s32.s32 %d, -%a, %b;",                    # negation outside vmad
])
def test_malformed_scalar_video_is_refused_at_load(make_runner, ins):
    r = make_runner()
    with pytest.raises(EmuError) as e:
        r.dev.load_module([module_text([ins])])
    assert e.value.name in ("CUDA_ERROR_INVALID_PTX", "CUDA_ERROR_NOT_SUPPORTED")

"""PTX's special registers and its predefined constant WARP_SZ, read by every thread of a launch.

Expected values follow the PTX ISA's definitions (section 10) on the emulated device: an sm_75 part
(256-byte shared memory allocation unit, no shared memory reserved for system software), no
cluster launches (each CTA a cluster of its own) and no device graphs."""
import time

import numpy as np
import pytest

from cricket.backends.emu import pack_params
from cricket.backends.emu.errors import EmuError

# (special register, PTX type) in the order the kernel stores them, one u32 or u64 slot each
FIXED = [
    ("%laneid", "u32"), ("%warpid", "u32"), ("%nwarpid", "u32"), ("%smid", "u32"), ("%nsmid", "u32"),
    ("%lanemask_eq", "u32"), ("%lanemask_lt", "u32"), ("%lanemask_le", "u32"), ("%lanemask_gt", "u32"),
    ("%lanemask_ge", "u32"), ("WARP_SZ", "u32"),
    ("%total_smem_size", "u32"), ("%dynamic_smem_size", "u32"), ("%aggr_smem_size", "u32"),
    ("%reserved_smem_offset_begin", "u32"), ("%reserved_smem_offset_end", "u32"),
    ("%reserved_smem_offset_cap", "u32"), ("%reserved_smem_offset_0", "u32"), ("%reserved_smem_offset_1", "u32"),
    ("%is_explicit_cluster", "u32"), ("%clusterid.x", "u32"), ("%clusterid.y", "u32"),
    ("%nclusterid.x", "u32"), ("%nclusterid.y", "u32"), ("%cluster_ctaid.x", "u32"),
    ("%cluster_nctaid.x", "u32"), ("%cluster_ctarank", "u32"), ("%cluster_nctarank", "u32"),
    ("%current_graph_exec", "u64"), ("%gridid", "u64"),
]
STATIC_SHARED = 256


def kernel_reading(regs: list[tuple[str, str]], static_shared: int = STATIC_SHARED) -> str:
    """A kernel that stores each register of ``regs`` in its own 8-byte slot of the thread's row."""
    lines = []
    for k, (name, t) in enumerate(regs):
        reg = "%rd9" if t == "u64" else "%r9"
        lines.append(f"    mov.{t} {reg}, {name};")
        if t == "u32":
            lines.append("    cvt.u64.u32 %rd9, %r9;")
        lines.append(f"    st.global.u64 [%rd3+{8 * k}], %rd9;")
    body = "\n".join(lines)
    return f"""
.version 9.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{{
    .shared .align 16 .b8 fixed[{static_shared}];
    .reg .b32 %r<10>;
    .reg .b64 %rd<10>;
    mov.u32 %r1, %ctaid.y;
    mov.u32 %r2, %nctaid.x;
    mov.u32 %r3, %ctaid.x;
    mad.lo.s32 %r1, %r1, %r2, %r3;          // linear CTA number
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %ntid.y;
    mul.lo.s32 %r2, %r2, %r3;               // threads per CTA
    mov.u32 %r3, %tid.y;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.s32 %r3, %r3, %r4, %r5;          // linear thread number in the CTA
    mad.lo.s32 %r1, %r1, %r2, %r3;          // linear thread number in the grid
    mov.u32 %r4, fixed;
    st.shared.u32 [%r4], %r1;
    mul.wide.u32 %rd2, %r1, {8 * len(regs)};
    ld.param.u64 %rd1, [out];
    add.s64 %rd3, %rd1, %rd2;
{body}
    ret;
}}
"""


def launch(r, ptx: str, grid, block, nregs: int, shared: int = 0) -> np.ndarray:
    mod = r.dev.load_module([ptx])
    fn = mod.get_function("k")
    threads = int(np.prod(grid)) * int(np.prod(block))
    out = r.zeros(threads * nregs, np.uint64)
    r.dev.launch(fn, grid, block, shared, pack_params(fn, out))
    return r.get(out, threads * nregs, np.uint64).reshape(threads, nregs)


def test_fixed_special_registers_have_their_documented_values(two_batches):
    grid, block, dynamic = (5, 2, 1), (40, 2, 1), 1000     # 80 threads: the third warp is partial

    def body(r):
        return {"regs": launch(r, kernel_reading(FIXED), grid, block, len(FIXED), dynamic)}

    got = two_batches(body)["regs"]
    col = {name: got[:, k] for k, (name, _) in enumerate(FIXED)}
    T = block[0] * block[1]
    thread = np.arange(len(got)) % T
    cta = np.arange(len(got)) // T
    lane = (thread % 32).astype(np.uint64)
    one = np.uint64(1)
    full = np.uint64(0xFFFFFFFF)
    want = {
        "%laneid": lane, "%warpid": thread // 32, "%nwarpid": 32, "%smid": cta % 8, "%nsmid": 8,
        "%lanemask_eq": one << lane, "%lanemask_lt": (one << lane) - one,
        "%lanemask_le": ((one << lane) << one) - one,
        "%lanemask_gt": full & ~(((one << lane) << one) - one), "%lanemask_ge": full & ~((one << lane) - one),
        "WARP_SZ": 32,
        # static and dynamic, in the sm_7x allocation unit of 256 bytes
        "%total_smem_size": -(-(STATIC_SHARED + dynamic) // 256) * 256, "%dynamic_smem_size": dynamic,
        "%aggr_smem_size": -(-(STATIC_SHARED + dynamic) // 256) * 256,
        "%reserved_smem_offset_begin": 0, "%reserved_smem_offset_end": 0, "%reserved_smem_offset_cap": 0,
        "%reserved_smem_offset_0": 0, "%reserved_smem_offset_1": 0,
        "%is_explicit_cluster": 0, "%clusterid.x": cta % grid[0], "%clusterid.y": cta // grid[0],
        "%nclusterid.x": grid[0], "%nclusterid.y": grid[1], "%cluster_ctaid.x": 0, "%cluster_nctaid.x": 1,
        "%cluster_ctarank": 0, "%cluster_nctarank": 1, "%current_graph_exec": 0,
    }
    for name, value in want.items():
        assert np.array_equal(col[name], np.broadcast_to(np.asarray(value, dtype=np.uint64), len(got))), name
    assert len(set(col["%gridid"].tolist())) == 1


def test_each_launch_gets_a_new_grid_id(runner):
    ptx = kernel_reading([("%gridid", "u64")])
    ids = [int(launch(runner, ptx, (2,), (8,), 1)[0, 0]) for _ in range(3)]
    assert ids[0] < ids[1] < ids[2]


def test_clock_halves_match_clock64_and_it_advances(runner):
    regs = [("%clock64", "u64"), ("%clock64", "u64"), ("%clock", "u32"), ("%clock_hi", "u32")]
    got = launch(runner, kernel_reading(regs), (3,), (64,), len(regs))
    first, second, low, high = got.T
    assert np.all(second > first)
    assert np.all(high == second >> np.uint64(32))
    assert np.all(low <= np.uint64(0xFFFFFFFF))


def test_globaltimer_is_the_host_clock_in_nanoseconds(runner):
    regs = [("%globaltimer", "u64"), ("%globaltimer_hi", "u32"), ("%globaltimer_lo", "u32")]
    before = time.time_ns()
    got = launch(runner, kernel_reading(regs), (2,), (32,), len(regs))
    after = time.time_ns()
    ns, high, low = got.T
    assert np.all((ns >= before) & (ns <= after))
    assert np.all((high >= before >> 32) & (high <= after >> 32))
    assert np.all(low <= np.uint64(0xFFFFFFFF))


def test_warp_sz_is_an_operand_like_an_immediate(runner):
    ptx = """
.version 9.0
.target sm_75
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %tid.x;
    add.u32 %r2, %r1, WARP_SZ;
    rem.u32 %r3, %r1, WARP_SZ;
    add.u32 %r2, %r2, %r3;
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
    ret;
}
"""
    mod = runner.dev.load_module([ptx])
    fn = mod.get_function("k")
    out = runner.zeros(100, np.uint32)
    runner.dev.launch(fn, (1,), (100,), 0, pack_params(fn, out))
    t = np.arange(100, dtype=np.uint32)
    assert np.array_equal(runner.get(out, 100, np.uint32), t + 32 + t % 32)


@pytest.mark.parametrize("name", ["%pm0", "%pm7_64", "%envreg3"])
def test_registers_without_a_meaning_here_are_refused_by_name(runner, name):
    # performance counters ("behavior currently undefined") and driver-defined registers
    t = "u64" if name.endswith("_64") else "u32"
    with pytest.raises(EmuError) as info:
        launch(runner, kernel_reading([(name, t)]), (1,), (32,), 1)
    assert info.value.code == 801 and name in str(info.value)


def test_a_misspelt_register_is_invalid_ptx(runner):
    with pytest.raises(EmuError) as info:
        runner.dev.load_module([kernel_reading([("%envreg32", "u32")])])
    assert info.value.code == 218


# ---- kernels nvcc built from warpSize (tests/emu/cuda/warp_size.cu) -----------------------------

@pytest.mark.parametrize("variant", ["sm75", "sm75G"])
def test_sample_style_block_reduction_with_warp_size(two_batches, rng, variant, ptx):
    assert "WARP_SZ" in ptx("warp_size", variant)
    n, bs = 5000, 96                              # three warps per block, the last block partly idle
    x = rng.integers(-1000, 1000, n, dtype=np.int32)
    nb = -(-n // bs)

    def body(r):
        m = r.module("warp_size", variant)
        out = r.zeros(nb, np.int32)
        r.launch(m, "block_sum", (nb,), (bs,), r.put(x), out, n, shared=(bs // 32) * 4)
        return {"sums": r.get(out, nb, np.int32)}

    sums = two_batches(body)["sums"]
    assert np.array_equal(sums, np.pad(x, (0, nb * bs - n)).reshape(nb, bs).sum(axis=1))


@pytest.mark.parametrize("variant", ["sm75", "sm75G"])
def test_sample_style_shuffle_scan_with_warp_size(two_batches, rng, variant):
    nb, bs = 6, 128
    n = nb * bs
    x = rng.integers(0, 100, n, dtype=np.int32)

    def body(r):
        m = r.module("warp_size", variant)
        out, totals = r.zeros(n, np.int32), r.zeros(n // 32, np.int32)
        r.launch(m, "warp_scan", (nb,), (bs,), r.put(x), out, totals)
        return {"scan": r.get(out, n, np.int32), "totals": r.get(totals, n // 32, np.int32)}

    got = two_batches(body)
    warps = x.reshape(-1, 32)
    assert np.array_equal(got["scan"], np.cumsum(warps, axis=1).ravel())
    assert np.array_equal(got["totals"], warps.sum(axis=1))

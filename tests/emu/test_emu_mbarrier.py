"""mbarrier (cuda::barrier, raw PTX forms) and copies that complete on one (cp.async with
cp.async.mbarrier.arrive on sm_80, cp.async.bulk with expect_tx/complete_tx on sm_90), from
``cuda/mbarrier.cu``, checked against the same computation on the host."""
import numpy as np
import pytest

from cricket.backends.emu import EmuError

VARIANTS = ["sm80", "sm90"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_barrier_phases_order_the_block(two_batches, rng, variant):
    blocks, threads, rounds = 6, 128, 4
    x = rng.integers(-1000, 1000, blocks * threads).astype(np.int32)

    def body(r):
        m = r.module("mbarrier", variant)
        po = r.zeros(blocks * threads, np.int32)
        r.launch(m, "phases", (blocks,), (threads,), r.put(x), po, rounds)
        return {"out": r.get(po, blocks * threads, np.int32)}

    got = two_batches(body)["out"].reshape(blocks, threads)
    xb = x.reshape(blocks, threads)
    t = np.arange(threads)
    want = sum(xb[:, (t + k + 1) % threads] * (k + 1) for k in range(rounds))
    assert np.array_equal(got, want)


@pytest.mark.parametrize("variant", VARIANTS)
def test_memcpy_async_completes_on_the_barrier(two_batches, rng, variant):
    blocks, per_block = 5, 300
    x = rng.integers(-(1 << 31), 1 << 31, (blocks, per_block, 4)).astype(np.int32)

    def body(r):
        m = r.module("mbarrier", variant)
        po = r.zeros(x.size, np.int32)
        r.launch(m, "copy_on_barrier", (blocks,), (96,), r.put(x), po, per_block)
        return {"out": r.get(po, x.size, np.int32)}

    got = two_batches(body)["out"].reshape(blocks, per_block, 4)
    assert np.array_equal(got, x[:, ::-1, ::-1])


@pytest.mark.parametrize("variant", VARIANTS)
def test_raw_arrive_drop_pending_count_and_waits(make_runner, variant):
    r = make_runner()
    m = r.module("mbarrier", variant)
    threads = 64
    po = r.zeros(3 * threads, np.uint32)
    r.launch(m, "raw_forms", (1,), (threads,), po)
    pending, done, second = r.get(po, 3 * threads, np.uint32).reshape(3, threads)
    assert sorted(pending.tolist()) == list(range(threads))      # each arrive took one
    assert done.tolist() == [1] * threads                        # the phase completed
    # after arrive_drop by the odd threads, the even ones alone complete the next phase
    assert second.tolist() == [1 if t % 2 == 0 else 7 for t in range(threads)]


PTX_TOO_MANY = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry over()
{
    .reg .b64 %s;
    .shared .align 8 .b64 bar;
    mbarrier.init.shared.b64 [bar], 2;
    mbarrier.arrive.shared.b64 %s, [bar], 3;
    ret;
}
"""


def test_arriving_more_than_pending_fails_the_launch(make_runner):
    r = make_runner()
    mod = r.dev.load_module([PTX_TOO_MANY])
    with pytest.raises(EmuError) as e:
        r.dev.launch(mod.get_function("over"), (1,), (1,), 0, b"")
    assert e.value.name == "CUDA_ERROR_LAUNCH_FAILED" and "pending" in str(e.value)


PTX_BULK_OUT = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry round_trip(.param .u64 src, .param .u64 dst)
{
    .reg .pred %leader;
    .reg .b32 %t, %v, %s;
    .reg .b64 %g, %o, %state;
    .shared .align 16 .b8 tile[512];
    .shared .align 8 .b64 bar;
    mov.u32 %t, %tid.x;
    setp.eq.u32 %leader, %t, 0;
    @%leader mbarrier.init.shared::cta.b64 [bar], 1;
    bar.sync 0;
    ld.param.u64 %g, [src];
    @%leader cp.async.bulk.prefetch.L2.global [%g], 512;
    @%leader mbarrier.arrive.expect_tx.shared::cta.b64 %state, [bar], 512;
    @%leader cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [tile], [%g], 512, [bar];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %leader, [bar], 0;
    @!%leader bra WAIT;
    mov.u32 %s, tile;
    mad.lo.u32 %s, %t, 4, %s;
    ld.shared.u32 %v, [%s];
    mul.lo.u32 %v, %v, 3;
    st.shared.u32 [%s], %v;
    fence.proxy.async.shared::cta;
    bar.sync 0;
    setp.eq.u32 %leader, %t, 0;
    ld.param.u64 %g, [dst];
    @%leader cp.async.bulk.global.shared::cta.bulk_group [%g], [tile], 512;
    @%leader cp.async.bulk.commit_group;
    @%leader cp.async.bulk.wait_group.read 0;
    ret;
}
"""


def test_bulk_copies_in_and_out_of_shared_memory(make_runner, rng):
    r = make_runner()
    mod = r.dev.load_module([PTX_BULK_OUT])
    x = rng.integers(0, 1 << 20, 128).astype(np.uint32)
    pd = r.zeros(128, np.uint32)
    r.dev.launch(mod.get_function("round_trip"), (1,), (128,), 0,
                 np.array([r.put(x), pd], np.uint64).tobytes())
    assert np.array_equal(r.get(pd, 128, np.uint32), x * 3)


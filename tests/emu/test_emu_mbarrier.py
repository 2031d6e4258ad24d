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

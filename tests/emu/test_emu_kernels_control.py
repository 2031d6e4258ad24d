"""Divergence, early return, barriers with exited threads, warp ops after divergence, spin locks."""
import numpy as np
import pytest

VARIANTS = ["sm75", "sm75G"]


def collatz_steps(x):
    out = []
    for v in x:
        v = int(v)
        s = 0
        while v != 1 and s < 1000:
            v = 3 * v + 1 if v & 1 else v >> 1
            s += 1
        out.append(s)
    return np.array(out, np.uint32)


@pytest.mark.parametrize("variant", VARIANTS)
def test_divergent_loop_trip_counts(two_batches, rng, variant):
    n = 700
    start = rng.integers(1, 5000, n, dtype=np.uint32)

    def body(r):
        m = r.module("diverge", variant)
        ps = r.put(np.full(n + 50, 77, np.uint32))
        r.launch(m, "collatz", ((n + 127) // 128,), (128,), r.put(start), ps, n)
        return {"s": r.get(ps, n + 50, np.uint32)}

    out = two_batches(body)
    assert np.array_equal(out["s"][:n], collatz_steps(start))
    assert (out["s"][n:] == 77).all()          # threads past n returned early and wrote nothing


@pytest.mark.parametrize("variant", VARIANTS)
def test_if_else_chain_with_early_return(two_batches, rng, variant):
    n = 1000
    v = rng.integers(-100, 100, n, dtype=np.int32)

    def body(r):
        m = r.module("diverge", variant)
        po = r.put(np.full(n, -7, np.int32))
        r.launch(m, "branchy", ((n + 63) // 64,), (64,), r.put(v), po, n)
        return {"o": r.get(po, n, np.int32)}

    out = two_batches(body)
    ref = np.full(n, -7, np.int64)
    for k, x in enumerate(v.tolist()):
        if x < 0:
            ref[k] = -x * 3
        elif x % 3 == 0:
            ref[k] = sum(j * x for j in range(x & 15))
        elif x % 3 == 1:
            ref[k] = x ^ 0x55
    assert np.array_equal(out["o"], ref.astype(np.int32))


def barrier_stress_reference(nblocks, bs):
    out = np.zeros(nblocks * bs, np.int64)
    counts = np.zeros(nblocks, np.int64)
    for b in range(nblocks):
        rounds = b % 5
        limit = bs - (b % 3) * 7
        s = list(range(bs))
        acc = [0] * bs
        live = [t for t in range(bs) if t < limit]
        for r in range(rounds):
            new_acc = {t: acc[t] + s[(t + r + 1) % bs] for t in live}
            for t in live:
                acc[t] = new_acc[t]
            for t in live:
                s[t] = acc[t]
        xs = {}
        for t in live:
            x = t
            for k in range(t & 7):
                x = (x * 3 + k) & 0xFFFFFFFF
            xs[t] = x
        c = sum(1 for t in live if acc[t] & 1)
        counts[b] = c
        for t in live:
            partner = xs.get(t ^ 1, 0)
            out[b * bs + t] = (acc[t] + ((xs[t] + partner) & 0xFFFFFFFF)) & 0xFFFFFFFF
    return out.astype(np.uint32).view(np.int32), counts.astype(np.int32)


@pytest.mark.parametrize("variant", ["sm75", "sm75G", "sm80"])
def test_barriers_with_per_block_counts_and_exited_threads(two_batches, variant):
    nblocks, bs = 9, 64

    def body(r):
        m = r.module("sync", variant)
        po, pc = r.zeros(nblocks * bs, np.int32), r.zeros(nblocks, np.int32)
        r.launch(m, "barrier_stress", (nblocks,), (bs,), po, pc)
        return {"o": r.get(po, nblocks * bs, np.int32), "c": r.get(pc, nblocks, np.int32)}

    out = two_batches(body)
    ref_o, ref_c = barrier_stress_reference(nblocks, bs)
    assert np.array_equal(out["c"], ref_c)
    assert np.array_equal(out["o"], ref_o)


@pytest.mark.parametrize("variant", ["sm75", "sm80"])
def test_match_any_and_warp_sum(two_batches, rng, variant):
    n = 256
    v = rng.integers(0, 4, n, dtype=np.int32)

    def body(r):
        m = r.module("sync", variant)
        pm, ps = r.zeros(n, np.uint32), r.zeros(n, np.int32)
        r.launch(m, "warp_match", (n // 64,), (64,), r.put(v), pm, ps)
        return {"m": r.get(pm, n, np.uint32), "s": r.get(ps, n, np.int32)}

    out = two_batches(body)
    w = v.reshape(-1, 32)
    ref_m = np.array([sum(1 << j for j in range(32) if row[j] == row[i]) for row in w for i in range(32)], np.uint32)
    assert np.array_equal(out["m"], ref_m)
    assert np.array_equal(out["s"], np.repeat(w.sum(axis=1), 32))


def test_spin_lock_across_blocks_completes(two_batches):
    nblocks = 12

    def body(r):
        m = r.module("sync", "sm75")
        po = r.put(np.full(nblocks, -1, np.int32))
        r.launch(m, "spin_lock", (nblocks,), (32,), po)
        total_ptr, _ = m.get_global("lock_total")
        return {"order": r.get(po, nblocks, np.int32), "total": r.get(total_ptr, 1, np.int32)}

    out = two_batches(body)
    assert sorted(out["order"]) == list(range(nblocks))     # each block entered the critical section once
    assert out["total"][0] == nblocks


def test_shuffles_with_sub_warp_widths(two_batches, rng):
    n = 128
    v = rng.integers(-1000, 1000, n, dtype=np.int32)
    results = {}
    for width, delta in ((8, 3), (16, 5), (32, 1), (4, 2)):
        def body(r, width=width, delta=delta):
            m = r.module("shfl")
            po = r.zeros(4 * n, np.int32)
            r.launch(m, "shfl_widths", (2,), (64,), r.put(v), po, width, delta)
            return {"o": r.get(po, 4 * n, np.int32).reshape(n, 4)}
        out = two_batches(body)["o"]
        lane = np.arange(n) % 32
        base = np.arange(n) - lane
        seg = lane - lane % width
        idx_src = base + seg + delta % width
        up_src = np.where(lane % width >= delta, np.arange(n) - delta, np.arange(n))
        down_src = np.where(lane % width + delta < width, np.arange(n) + delta, np.arange(n))
        x = lane ^ delta
        xor_src = np.where(x < seg + width, base + x, np.arange(n))
        assert np.array_equal(out[:, 0], v[idx_src]), width
        assert np.array_equal(out[:, 1], v[up_src]), width
        assert np.array_equal(out[:, 2], v[down_src]), width
        assert np.array_equal(out[:, 3], v[xor_src]), width
        results[width] = out


def test_shuffle_by_half_a_warp_with_a_half_mask(two_batches, rng):
    n = 64
    v = rng.integers(-1000, 1000, n, dtype=np.int32)

    def body(r):
        m = r.module("shfl")
        po = r.zeros(n, np.int32)
        r.launch(m, "shfl_half", (1,), (64,), r.put(v), po)
        return {"o": r.get(po, n, np.int32)}

    out = two_batches(body)["o"]
    lane = np.arange(n) % 32
    src = np.where((lane < 16) & (lane + 1 < 16), np.arange(n) + 1, np.arange(n))
    ref = np.where(lane < 16, v + v[src], v)
    assert np.array_equal(out, ref)

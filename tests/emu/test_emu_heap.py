"""Device malloc/free and new/delete (``cuda/heap.cu``): per-device heap, 16-byte aligned blocks,
NULL when exhausted, the size limit settable until a kernel has used the heap."""
import numpy as np
import pytest

from cricket.backends.emu import EmuError
from cricket.backends.emu.heap import DEFAULT_HEAP_SIZE

VARIANTS = ["sm75", "sm75G"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_per_thread_buffers_hold_their_values(two_batches, rng, variant):
    n = 300
    lengths = rng.integers(0, 40, n).astype(np.int32)

    def body(r):
        m = r.module("heap", variant)
        ps, pa = r.zeros(n, np.int64), r.zeros(n, np.uint64)
        r.launch(m, "per_thread_buffers", ((n + 127) // 128,), (128,), r.put(lengths), ps, pa, n)
        return {"sums": r.get(ps, n, np.int64), "addrs": r.get(pa, n, np.uint64)}

    got = two_batches(body)
    i = np.arange(n)
    want = np.array([sum(k * int(j) + 1 for k in range(int(L))) for j, L in zip(i, lengths)], np.int64)
    want[lengths == 0] = -1                 # malloc(0) gives NULL here
    assert np.array_equal(got["sums"], want)
    live = got["addrs"][lengths > 0]
    assert np.all(live % 16 == 0) and len(np.unique(live)) == len(live)


@pytest.mark.parametrize("variant", VARIANTS)
def test_new_and_delete_build_and_free_linked_lists(two_batches, variant):
    n = 200

    def body(r):
        m = r.module("heap", variant)
        po = r.zeros(n, np.int32)
        for _ in range(3):                  # everything is freed: the heap never runs out
            r.launch(m, "linked_lists", ((n + 63) // 64,), (64,), po, n)
        return {"out": r.get(po, n, np.int32)}

    got = two_batches(body)
    want = []
    for i in range(n):
        s = 0
        for k in reversed(range(i % 9 + 1)):
            s = (3 * s + k * k + i) & 0xFFFFFFFF
        want.append(s - (1 << 32) if s >= 1 << 31 else s)
    assert got["out"].tolist() == want


def test_exhausted_heap_gives_null_and_free_makes_room(make_runner):
    r = make_runner()
    m = r.module("heap")
    assert r.dev.malloc_heap_size() == DEFAULT_HEAP_SIZE
    r.dev.set_malloc_heap_size(1 << 20)
    n, size = 256, 16 << 10                 # 4 MiB asked of a 1 MiB heap
    pa = r.zeros(n, np.uint64)
    r.launch(m, "exhaust", (n // 64,), (64,), pa, size)
    addrs = r.get(pa, n, np.uint64)
    got = addrs[addrs != 0]
    assert len(got) == (1 << 20) // size and np.all(addrs[len(got):] == 0)    # lane order, then NULL
    assert np.all(np.diff(np.sort(got).astype(np.int64)) >= size)
    r.launch(m, "release", (n // 64,), (64,), pa, n)
    r.launch(m, "exhaust", (n // 64,), (64,), pa, size)
    assert np.count_nonzero(r.get(pa, n, np.uint64)) == len(got)


def test_heap_size_is_fixed_once_a_kernel_used_it(make_runner):
    r = make_runner()
    m = r.module("heap")
    pa = r.zeros(64, np.uint64)
    r.launch(m, "exhaust", (1,), (64,), pa, 32)
    with pytest.raises(EmuError) as e:
        r.dev.set_malloc_heap_size(64 << 20)
    assert e.value.name == "CUDA_ERROR_INVALID_VALUE"
    r.dev.reset()                           # a new context starts with the default heap again
    r.dev.set_malloc_heap_size(64 << 20)
    assert r.dev.malloc_heap_size() == 64 << 20


def test_freeing_a_pointer_twice_is_an_illegal_address(make_runner):
    r = make_runner()
    m = r.module("heap")
    pa = r.zeros(64, np.uint64)
    r.launch(m, "exhaust", (1,), (64,), pa, 100)
    addrs = r.get(pa, 64, np.uint64)
    addrs[1] = addrs[0]
    with pytest.raises(EmuError) as e:
        r.launch(m, "release", (1,), (64,), r.put(addrs), 64)
    assert e.value.name == "CUDA_ERROR_ILLEGAL_ADDRESS" and "free(" in str(e.value)

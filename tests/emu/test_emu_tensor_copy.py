"""TMA tensor copies on emu: cp.async.bulk.tensor loads and stores of rank 1-5 through tensor maps.

The maps are encoded as cuTensorMapEncodeTiled would (``cricket.cudafacts.tensor_map``); the
expected boxes are gathered element by element on the host from the documented semantics: ceil(box
/ element stride) elements along each dimension (dimension 0 always stride 1), row-major in shared
memory, zeros for elements outside the tensor, which a store leaves alone.
"""
import itertools

import numpy as np
import pytest

from cricket.backends.emu.errors import EmuError
from cricket.cudafacts import tensor_map as tm

SMEM_WORDS = 16384 // 4
SENTINEL = 0xDEADBEEF

# rank -> (dims, box, element strides, coordinates): boxes stick out of the tensor on both sides
CASES = {
    1: ((40,), (16,), (1,), (30,)),
    2: ((20, 9), (8, 4), (1, 2), (-4, 5)),
    3: ((12, 5, 4), (4, 3, 2), (1, 1, 2), (10, -1, 2)),
    4: ((8, 3, 3, 2), (4, 2, 3, 2), (1, 1, 1, 1), (6, 2, -1, 1)),
    5: ((4, 2, 3, 2, 3), (4, 2, 2, 2, 2), (1, 1, 2, 1, 1), (0, 1, 2, -1, 2)),
}


def _tensor(rng, dims):
    """uint32 data with its rows padded to 16 bytes plus one spare row, and the byte strides."""
    row = -(-dims[0] * 4 // 16) * 16 + 16
    strides, total = [], row
    for d in dims[1:]:
        strides.append(total)
        total *= d
    data = rng.integers(0, 1 << 32, total // 4, dtype=np.uint64).astype(np.uint32)
    return data, tuple(strides)


def _element_words(dims, strides, box, estrides, coords):
    """For each box element in shared-memory order: its word index in the tensor, or None outside."""
    steps = [range(0, box[k], 1 if k == 0 else estrides[k]) for k in range(len(dims))]
    out = []
    for idx in itertools.product(*reversed(steps)):         # the last dimension varies slowest
        pos = [coords[k] + i for k, i in enumerate(reversed(idx))]
        if all(0 <= p < d for p, d in zip(pos, dims)):
            out.append((pos[0] * 4 + sum(p * s for p, s in zip(pos[1:], strides))) // 4)
        else:
            out.append(None)
    return out


def _args(rank, coords):
    c = list(coords) + [0] * (5 - rank)
    return [np.int32(rank)] + [np.int32(v) for v in c]


def _case(runner, rng, rank):
    """A rank's tensor in device memory and its map: (data, byte strides, map, element words of the box)."""
    dims, box, estrides, coords = CASES[rank]
    data, strides = _tensor(rng, dims)
    m = tm.encode_tiled(tm.UINT32, rank, runner.put(data), dims, strides, box, estrides)
    return data, m, _element_words(dims, strides, box, estrides, coords)


@pytest.mark.parametrize("rank", sorted(CASES))
def test_tensor_load_gathers_the_box(runner, rng, rank):
    data, m, words = _case(runner, rng, rank)
    out, done = runner.zeros(SMEM_WORDS, np.uint32), runner.zeros(1, np.int32)
    runner.launch(runner.module("tensor_copy", "sm90"), "tma_load", (1,), (128,), m.pack(), *_args(rank, CASES[rank][3]),
                  np.int32(m.box_bytes), out, done)
    want = np.array([0 if w is None else data[w] for w in words], np.uint32)
    got = runner.get(out, SMEM_WORDS, np.uint32)
    assert len(want) * 4 == m.box_bytes
    assert np.array_equal(got[:len(want)], want)
    assert (got[len(want):] == SENTINEL).all()
    assert runner.get(done, 1, np.int32)[0] == 1          # the mbarrier's transaction bytes completed


@pytest.mark.parametrize("rank", sorted(CASES))
def test_tensor_store_writes_only_inside_the_tensor(runner, rng, rank):
    data, m, words = _case(runner, rng, rank)
    src = rng.integers(0, 1 << 32, SMEM_WORDS, dtype=np.uint64).astype(np.uint32)
    runner.launch(runner.module("tensor_copy", "sm90"), "tma_store", (1,), (128,), m.pack(),
                  *_args(rank, CASES[rank][3]), runner.put(src))
    want = data.copy()
    for k, w in enumerate(words):
        if w is not None:
            want[w] = src[k]
    assert np.array_equal(runner.get(m.address, len(data), np.uint32), want)


def test_swizzle_128b_moves_16_byte_chunks_by_row(runner, rng):
    data, strides = _tensor(rng, (32, 8))
    m = tm.encode_tiled(tm.UINT32, 2, runner.put(data), (32, 8), strides, (32, 8), (1, 1),
                        swizzle=tm.SWIZZLE_128B)
    out, done = runner.zeros(SMEM_WORDS, np.uint32), runner.zeros(1, np.int32)
    runner.launch(runner.module("tensor_copy", "sm90"), "tma_load", (1,), (64,), m.pack(), *_args(2, (0, 0)),
                  np.int32(m.box_bytes), out, done)
    got = runner.get(out, 256, np.uint32).reshape(8, 8, 4)        # row, 16-byte chunk, word
    rows = data.reshape(8, -1)[:, :32].reshape(8, 8, 4)
    for r in range(8):                                             # chunk c of row r sits at c ^ (r % 8)
        assert np.array_equal(got[r, [c ^ r for c in range(8)]], rows[r])


def test_nan_fill_for_float_elements_outside(runner, rng):
    vals = rng.uniform(-1, 1, 8).astype(np.float32)
    buf = runner.put(vals)
    m = tm.encode_tiled(tm.FLOAT32, 1, buf, (8,), (), (8,), (1,), oob_fill=tm.OOB_FILL_NAN)
    out, done = runner.zeros(SMEM_WORDS, np.uint32), runner.zeros(1, np.int32)
    runner.launch(runner.module("tensor_copy", "sm90"), "tma_load", (1,), (32,), m.pack(), *_args(1, (4,)),
                  np.int32(32), out, done)
    got = runner.get(out, 8, np.uint32).view(np.float32)
    assert np.array_equal(got[:4], vals[4:]) and np.isnan(got[4:]).all()


def test_map_in_device_memory_with_multicast_to_this_cta(runner, rng):
    data, strides = _tensor(rng, (8, 4))
    m = tm.encode_tiled(tm.UINT32, 2, runner.put(data), (8, 4), strides, (4, 2), (1, 1))
    out, done = runner.zeros(8, np.uint32), runner.zeros(1, np.int32)
    runner.launch(runner.module("tensor_copy", "sm90"), "tma_load_multicast", (1,), (32,),
                  runner.put(np.frombuffer(m.pack(), np.uint8)), np.int32(4), np.int32(1), np.int32(32), out, done)
    rows = data.reshape(4, -1)
    assert np.array_equal(runner.get(out, 8, np.uint32).reshape(2, 4), rows[1:3, 4:8])
    assert runner.get(done, 1, np.int32)[0] == 1


def test_forged_map_wrong_rank_and_oversized_box_fault(runner, rng):
    data, strides = _tensor(rng, (8, 4))
    m = tm.encode_tiled(tm.UINT32, 2, runner.put(data), (8, 4), strides, (4, 2), (1, 1))
    mod = runner.module("tensor_copy", "sm90")
    out, done = runner.zeros(SMEM_WORDS, np.uint32), runner.zeros(1, np.int32)
    forged = bytearray(m.pack())
    forged[80:82] = (0).to_bytes(2, "little")                      # a box of 0 elements
    huge = tm.encode_tiled(tm.UINT32, 2, m.address, (8, 4), strides, (64, 256), (1, 1))   # 64 KiB > the block's
    for raw, rank in ((bytes(forged), 2), (m.pack(), 3), (huge.pack(), 2)):
        with pytest.raises(EmuError) as e:
            runner.launch(mod, "tma_load", (1,), (32,), raw, *_args(rank, (0,) * rank), np.int32(32), out, done)
        assert e.value.code == 700


@pytest.mark.parametrize("change,error", [
    (dict(address=8), tm.TensorMapError),                         # not 16-byte aligned
    (dict(strides=(40,)), tm.TensorMapError),                     # stride not a multiple of 16
    (dict(box=(2, 2)), tm.TensorMapError),                        # inner box of 8 bytes
    (dict(box=(8, 300)), tm.TensorMapError),                      # box above 256
    (dict(element_strides=(1, 9)), tm.TensorMapError),
    (dict(swizzle=tm.SWIZZLE_32B), tm.TensorMapError),            # a 32-byte inner box row, 32B swizzle: fine
    (dict(oob_fill=tm.OOB_FILL_NAN), tm.TensorMapError),          # NaN fill of integers
    (dict(interleave=1), tm.TensorMapUnsupported),
    (dict(data_type=13), tm.TensorMapUnsupported),
])
def test_encode_checks_the_documented_limits(change, error):
    args = dict(data_type=tm.UINT32, rank=2, address=0x1000, dims=(8, 4), strides=(48,), box=(8, 2),
                element_strides=(1, 1))
    args.update(change)
    if change.get("swizzle") == tm.SWIZZLE_32B:
        assert tm.encode_tiled(**args).swizzle == tm.SWIZZLE_32B
        args["box"] = (16, 2)                                     # 64 bytes do not fit a 32-byte swizzle
    with pytest.raises(error):
        tm.encode_tiled(**args)


@pytest.mark.parametrize("op", ["add", "min", "xor"])
def test_tensor_reduction_into_the_box(runner, rng, op):
    data, strides = _tensor(rng, (12, 6))
    data = data.view(np.int32) if op == "min" else data
    base = runner.put(data)
    m = tm.encode_tiled(tm.INT32 if op == "min" else tm.UINT32, 2, base, (12, 6), strides, (8, 4), (1, 1))
    src = rng.integers(0, 1 << 32, SMEM_WORDS, dtype=np.uint64).astype(np.uint32)
    coords = (6, 3)                                    # the box sticks out on the right and at the bottom
    runner.launch(runner.module("tensor_copy", "sm90"), "tma_reduce_2d", (1,), (64,), m.pack(),
                  np.int32(["add", "min", "xor"].index(op)), np.int32(coords[0]), np.int32(coords[1]),
                  runner.put(src))
    want = data.copy()
    vals = src.view(data.dtype)
    fn = {"add": np.add, "min": np.minimum, "xor": np.bitwise_xor}[op]
    for k, w in enumerate(_element_words((12, 6), strides, (8, 4), (1, 1), coords)):
        if w is not None:
            want[w] = fn(want[w], vals[k])
    assert np.array_equal(runner.get(base, len(data), data.dtype), want)


def test_bulk_reductions_to_global_and_shared(runner, rng):
    src = np.concatenate([rng.integers(-8, 8, 16).astype(np.float32).view(np.uint32),
                          rng.integers(0, 1 << 32, 48, dtype=np.uint64).astype(np.uint32)])
    g0 = rng.integers(-8, 8, 16).astype(np.float32)
    gi0 = rng.integers(-1 << 31, 1 << 31, 32).astype(np.int32)
    g, gi = runner.put(g0), runner.put(gi0)
    out, done = runner.zeros(16, np.uint32), runner.zeros(1, np.int32)
    runner.launch(runner.module("tensor_copy", "sm90"), "bulk_reduce", (1,), (32,), g, gi, runner.put(src), out, done)
    assert np.array_equal(runner.get(g, 16, np.float32), g0 + 2 * src[:16].view(np.float32))
    assert np.array_equal(runner.get(gi, 32, np.int32), np.minimum(gi0, src[32:64].view(np.int32)))
    assert np.array_equal(runner.get(out, 16, np.uint32), (1000 * np.arange(16) + src[:16]).astype(np.uint32))
    assert runner.get(done, 1, np.int32)[0] == 1

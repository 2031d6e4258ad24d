"""Helpers for the emu tests: PTX fixtures, a small runner, running a body at two batch sizes, and
kernel worker processes."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cricket.backends.emu import EmuDevice, pack_params
from cricket.backends.emu.workers import KernelWorkers

PTX_DIR = Path(__file__).resolve().parent / "ptx"
CUDA_DIR = Path(__file__).resolve().parent / "cuda"
# Batch sizes every kernel test runs at: many CTAs per vector, and one small CTA group at a time.
BATCH_SIZES = (65536, 64)


def ptx_text(name: str, variant: str = "sm75") -> str:
    return (PTX_DIR / f"{name}.{variant}.ptx").read_text()


class Runner:
    """An EmuDevice with NumPy-friendly helpers; printf output is collected in ``printed``."""

    def __init__(self, max_lanes: int = 65536, **kw) -> None:
        self.printed: list[str] = []
        self.dev = EmuDevice(arena_size=1 << 30, max_lanes=max_lanes, printf_sink=self.printed.append, **kw)
        self._mods: dict = {}

    def module(self, name: str, variant: str = "sm75"):
        key = (name, variant)
        if key not in self._mods:
            self._mods[key] = self.dev.load_module([ptx_text(name, variant)])
        return self._mods[key]

    def put(self, array) -> int:
        a = np.ascontiguousarray(array)
        p = self.dev.mem_alloc(a.nbytes)
        self.dev.memcpy_htod(p, a)
        return p

    def zeros(self, n: int, dtype) -> int:
        size = n * np.dtype(dtype).itemsize
        p = self.dev.mem_alloc(size)
        self.dev.memset_d8(p, 0, size)
        return p

    def get(self, ptr: int, n: int, dtype) -> np.ndarray:
        return np.frombuffer(self.dev.memcpy_dtoh(ptr, n * np.dtype(dtype).itemsize), dtype=dtype).copy()

    def launch(self, mod, kernel: str, grid, block, *args, shared: int = 0) -> None:
        fn = mod.get_function(kernel)
        self.dev.launch(fn, grid, block, shared, pack_params(fn, *args))

    def close(self) -> None:
        self.dev.close()


def at_two_batch_sizes(body, **kw) -> dict:
    """Run ``body(runner) -> {name: array}`` at both batch sizes; the results must be bit-identical."""
    results = []
    for lanes in BATCH_SIZES:
        r = Runner(max_lanes=lanes, **kw)
        try:
            out = body(r)
            if r.printed:
                out = dict(out, printed=np.array(["".join(r.printed)]))
            results.append(out)
        finally:
            r.close()
    first, second = results
    assert first.keys() == second.keys()
    for k in first:
        a, b = np.asarray(first[k]), np.asarray(second[k])
        assert a.dtype == b.dtype and a.shape == b.shape, k
        if a.dtype.kind == "f":
            assert np.array_equal(a.view(f"u{a.dtype.itemsize}"), b.view(f"u{b.dtype.itemsize}")), \
                f"{k} differs between batch sizes {BATCH_SIZES}"
        else:
            assert np.array_equal(a, b), f"{k} differs between batch sizes {BATCH_SIZES}"
    return first


@pytest.fixture
def runner():
    r = Runner()
    yield r
    r.close()


@pytest.fixture(scope="module")
def workers():
    """Kernel worker processes (emu.workers) for a test module's devices."""
    w = KernelWorkers()
    yield w
    w.close()


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def two_batches():
    """``two_batches(body)``: run a kernel test body at both batch sizes and return its results."""
    return at_two_batch_sizes


@pytest.fixture
def ptx():
    """``ptx(name, variant)``: the text of a committed PTX fixture."""
    return ptx_text


@pytest.fixture
def make_runner():
    made = []

    def make(**kw) -> Runner:
        r = Runner(**kw)
        made.append(r)
        return r
    yield make
    for r in made:
        r.close()


FP8_VALUES = np.array([-4, -3, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3, 4])


def exact_matrix_values(rng, shape, etype: str) -> np.ndarray:
    """float64 values of a matrix of element type ``etype`` whose products and sums are exact in
    every accumulator type: the full integer range for 4/8-bit integers, small integers (quarters
    for .f64/.tf32) for floats, a few fp8 values."""
    ints = {"b1": (0, 2), "s4": (-8, 8), "u4": (0, 16), "s8": (-128, 128), "u8": (0, 256), "s32": (-(1 << 20), 1 << 20)}
    if etype in ints:
        return rng.integers(*ints[etype], shape).astype(np.float64)
    if etype in ("e4m3", "e5m2"):
        return rng.choice(FP8_VALUES, shape)
    return rng.integers(-4, 5, shape) * (0.25 if etype in ("f64", "tf32") else 1.0)


@pytest.fixture
def matrix_values(rng):
    """``matrix_values(shape, etype)``: see ``exact_matrix_values``."""
    return lambda shape, etype: exact_matrix_values(rng, shape, etype)

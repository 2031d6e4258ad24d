"""Throughput of the emu backend: thread-instructions per second and the fixed cost of a launch.

    python bench/emu.py [--lanes N] [--repeat K]

Prints a Markdown table: each kernel's emulated throughput next to the time NumPy takes for the same
computation on the same data (measured in this run), and the goal from the project's issue.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cricket.backends.emu import EmuDevice, pack_params  # noqa: E402

PTX = ROOT / "tests" / "emu" / "ptx"


def times_of(fn, repeat):
    """Seconds of each of ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times


def best_of(fn, repeat):
    return min(times_of(fn, repeat))


def count_label(n: int) -> str:
    """1048576 → 1M, 65536 → 64K."""
    return f"{n >> 20}M" if n >= 1 << 20 else f"{n >> 10}K"


class Bench:
    """``shrink``: every problem size divided by 2**shrink (a side of a square matrix by
    2**(shrink // 2)), for a run that only checks every row is measured (the tiny set)."""

    def __init__(self, lanes: int, repeat: int, shrink: int = 0) -> None:
        self.dev = EmuDevice(max_lanes=lanes, printf_sink=lambda s: None)
        self.repeat = repeat
        self.shrink = shrink
        self.rows = []
        self.data = []      # per kernel: every run's rate and reference time (for cricket bench)
        self.rng = np.random.default_rng(1)

    def put(self, a):
        p = self.dev.mem_alloc(a.nbytes)
        self.dev.memcpy_htod(p, a)
        return p

    def mod(self, name, variant="sm75"):
        return self.dev.load_module([(PTX / f"{name}.{variant}.ptx").read_text()])

    def kernel_row(self, what, mod, kernel, grid, block, args, ref_fn, goal_m, shared=0):
        fn = mod.get_function(kernel)
        params = pack_params(fn, *args)
        self.dev.launch(fn, grid, block, shared, params)          # compile and warm up
        stats = {}

        def run():
            self.dev.launch(fn, grid, block, shared, params)
            stats.update(self.dev.last_launch)
        times = times_of(run, self.repeat)
        t = min(times)
        rate = stats["thread_instructions"] / t / 1e6
        ref_times = times_of(ref_fn, max(3, self.repeat))
        tref = min(ref_times)
        self.data.append({"what": what, "goal_m": goal_m, "times": times, "ref_times": ref_times,
                          "rates": [stats["thread_instructions"] / x for x in times]})
        self.rows.append((what, f"{rate:,.0f} M thread-instr/s ({t * 1e3:.1f} ms)", f"{tref * 1e3:.2f} ms",
                          f"{t / tref:,.0f}x slower", f">= {goal_m} M/s", "yes" if rate >= goal_m else "no"))

    def run(self):
        n = 1 << 20 >> self.shrink
        a = self.rng.random(n, dtype=np.float32)
        b = self.rng.random(n, dtype=np.float32)
        basic = self.mod("basic")
        pa, pb, pc = self.put(a), self.put(b), self.dev.mem_alloc(4 * n)
        self.kernel_row(f"vector add, {count_label(n)} floats", basic, "vecadd", (n // 256,), (256,), (pa, pb, pc, n),
                        lambda: np.add(a, b), 300)

        red = self.mod("reduce")
        nb = n // 256
        po = self.dev.mem_alloc(4 * nb)
        self.kernel_row(f"shared-memory block reduction, {count_label(n)} floats", red, "block_reduce", (nb,), (256,),
                        (pa, po, n), lambda: a.reshape(-1, 256).sum(axis=1), 100, shared=1024)

        m = 1 << 16 >> self.shrink
        start = self.rng.integers(1, 100000, m, dtype=np.uint32)
        ps, pst = self.put(start), self.dev.mem_alloc(4 * m)
        div = self.mod("diverge")

        def collatz_numpy():
            x = start.astype(np.uint64)
            s = np.zeros(m, np.uint32)
            live = x != 1
            while live.any():
                odd = (x & 1) == 1
                x = np.where(live, np.where(odd, 3 * x + 1, x >> 1), x)
                s += live
                live = (x != 1) & (s < 1000)
            return s
        self.kernel_row(f"divergent loop (Collatz), {count_label(m)} threads", div, "collatz", (m // 256,), (256,), (ps, pst, m),
                        collatz_numpy, 100)

        k = 256 >> self.shrink // 2
        A = self.rng.random((k, k), dtype=np.float32)
        B = self.rng.random((k, k), dtype=np.float32)
        pA, pB, pC = self.put(A), self.put(B), self.dev.mem_alloc(4 * k * k)
        mm = self.mod("matmul")
        self.kernel_row(f"tiled matmul {k}x{k}x{k} (shared memory)", mm, "matmul_tiled", (k // 16, k // 16), (16, 16),
                        (pA, pB, pC, k, k, k), lambda: A @ B, 100)
        self.wmma_gemm_row(512 >> self.shrink // 2)

        self.recursion_row()

        fn = basic.get_function("vecadd")
        params = pack_params(fn, pa, pb, pc, 256)
        self.dev.launch(fn, (1,), (256,), 0, params)
        launches = 200 >> self.shrink // 2
        times = [x / launches for x in
                 times_of(lambda: [self.dev.launch(fn, (1,), (256,), 0, params) for _ in range(launches)],
                          max(3, self.repeat))]
        ref_times = times_of(lambda: np.add(a[:256], b[:256]), 20)
        t, tref = min(times), min(ref_times)
        self.data.append({"what": "fixed cost of a small launch (vecadd, 256 threads)", "times": times,
                          "ref_times": ref_times, "goal_s": 0.5e-3})
        self.rows.append(("fixed cost of a small launch (vecadd, 256 threads)", f"{t * 1e3:.3f} ms",
                          f"{tref * 1e3:.4f} ms", f"{t / tref:,.0f}x", "<= 0.5 ms", "yes" if t <= 0.5e-3 else "no"))

    def wmma_gemm_row(self, k: int = 512):
        """The tiled tensor-core GEMM of examples/wmma_gemm.cuh (wmma, f16 in, f32 accumulate)."""
        A = self.rng.standard_normal((k, k)).astype(np.float16)
        B = self.rng.standard_normal((k, k)).astype(np.float16)
        pA, pB, pC = self.put(A), self.put(B), self.dev.mem_alloc(4 * k * k)
        A64, B64 = A.astype(np.float64), B.astype(np.float64)
        self.kernel_row(f"tiled wmma GEMM {k}x{k}x{k} (tensor cores, shared memory)", self.mod("wmma_gemm", "sm80"),
                        "wmma_gemm", (k // 32, k // 32), (128,), (pA, pB, pC, k, k, k),
                        lambda: (A64 @ B64).astype(np.float32), 100)

    def recursion_row(self):
        """Recursive device functions (fib, ackermann, a tree walk) with real per-lane call frames."""
        n, size = 1 << 14 >> self.shrink, 29
        values = ((np.arange(size) * 37) % 23 - 11).astype(np.int32)
        outs = [self.dev.mem_alloc(4 * n) for _ in range(3)] + [self.dev.mem_alloc(8 * n)]

        def fib(k):
            return k if k < 2 else fib(k - 1) + fib(k - 2)

        def ack(m, k):
            return k + 1 if m == 0 else ack(m - 1, 1) if k == 0 else ack(m - 1, ack(m, k - 1))

        def walk(node, depth):
            if node >= size:
                return depth
            seen = int(values[(node + node % 3) % size]) * (node % 3 + 1)
            return seen + 2 * walk(2 * node + 1, depth + 1) - walk(2 * node + 2, depth + 1)

        def python_recursion():
            return [(fib(i % 15), ack(i % 3, i % 4), (i % 23) % 2, walk(i % size, 0)) for i in range(n)]
        self.kernel_row(f"recursive calls (fib, ackermann, tree walk), {count_label(n)} threads", self.mod("calls"), "recursion",
                        (n // 256,), (256,), (self.put(values), size, *outs, n), python_recursion, 10)

    def table(self) -> str:
        head = ("what", "ours", "reference (NumPy, or Python for recursion; same data)", "ratio", "goal", "met")
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in self.rows]
        return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lanes", type=int, default=65536, help="lanes per batch (EmuDevice max_lanes)")
    ap.add_argument("--repeat", type=int, default=5, help="timed repetitions (best is reported)")
    args = ap.parse_args(argv)
    b = Bench(args.lanes, args.repeat)
    b.run()
    print(f"emu backend, {args.lanes} lanes per batch, NumPy {np.__version__}\n")
    print(b.table())
    return 0


if __name__ == "__main__":
    sys.exit(main())

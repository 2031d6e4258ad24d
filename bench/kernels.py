"""Sessions' emulated kernels side by side: a session's small calls while others run endless
kernels (against the same calls with none running), and two sessions' kernels at once (against one).

    python -m bench.kernels [--quick]

Both run against a real ``cricket server --backend emu`` on loopback, references in the same run.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

from .config import Config, from_env
from .report import BenchResult, Row
from .servers import CricketServer
from .stats import Sample

PTX = (Path(__file__).resolve().parent.parent / "examples" / "endless_kernels.ptx").read_bytes()
SPINNERS = 4
COPY = b"\x5a" * 4096


def _small_calls(conn, calls: int) -> tuple[float, float]:
    """Median seconds of a NULL call and of a 4 KiB copy to the device and back."""
    nulls, copies = [], []
    buf = conn.to_device(COPY)
    for _ in range(calls):
        t = time.perf_counter()
        conn.ping()
        nulls.append(time.perf_counter() - t)
        t = time.perf_counter()
        conn.memcpy_htod(buf, COPY)
        conn.memcpy_dtoh(buf, len(COPY))
        copies.append(time.perf_counter() - t)
    buf.free()
    return statistics.median(nulls), statistics.median(copies)


def _calibrate(count, seconds: float) -> int:
    """The ``count`` kernel's n that runs about ``seconds`` in one session."""
    count.launch(1, 32, [1], sync=True)            # compiles the kernel
    n = 1000
    while True:
        t = time.perf_counter()
        count.launch(1, 32, [n], sync=True)
        took = time.perf_counter() - t
        if took > 0.05:
            return max(n, int(n * seconds / took))
        n *= 4


def _kernels_in(conns, n: int, launches: int) -> float:
    """Kernels finished per second with each connection launching ``launches`` in its own thread."""
    kernels = [c.load_module(PTX).get_function("count") for c in conns]

    def run(k) -> None:
        for _ in range(launches):
            k.launch(1, 32, [n], sync=True)
    threads = [threading.Thread(target=run, args=(k,)) for k in kernels]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return len(conns) * launches / (time.perf_counter() - t)


def _large_launch(cfg: Config, iterations: int) -> tuple[list[float], list[float], int]:
    """Seconds of one launch of 16 batches of CTAs, each thread counting to ``iterations``, in one
    worker process, and spread over every usable core (the engine directly, no server)."""
    from cricket.backends.emu import EmuDevice, pack_params
    from cricket.backends.emu.workers import KernelWorkers
    cores = len(os.sched_getaffinity(0))
    workers = KernelWorkers()
    times: dict[int, list[float]] = {}
    try:
        for split in (1, cores):
            dev = EmuDevice(arena_size=1 << 26, kernel_workers=workers, split_launches=split, max_lanes=4096)
            try:
                fn = dev.load_module([PTX.decode()]).get_function("count")
                params = pack_params(fn, iterations)
                dev.launch(fn, (16 * 128,), (32,), 0, params)           # each worker compiles it
                times[split] = []
                for _ in range(cfg.repeat):
                    t = time.perf_counter()
                    dev.launch(fn, (16 * 128,), (32,), 0, params)
                    times[split].append(time.perf_counter() - t)
            finally:
                dev.close()
    finally:
        workers.close()
    return times[1], times[cores], cores


def measure(cfg: Config, progress) -> BenchResult:
    from cricket.client.api import connect
    res = BenchResult("kernels", "emu: one session's calls and kernels beside other sessions' kernels")
    calls = 20 if cfg.tiny else 100 if cfg.quick else 300
    server = CricketServer("emu=memory=512M")
    try:
        progress("small calls, unloaded and beside endless kernels")
        quiet, loaded = [], []
        with connect(server.address) as probe:
            _small_calls(probe, 10)
            for _ in range(cfg.repeat):
                quiet.append(_small_calls(probe, calls))
            spinners = [connect(server.address) for _ in range(SPINNERS)]
            try:
                for conn in spinners:
                    out = conn.alloc(4 * 32)
                    conn.load_module(PTX).get_function("forever").launch(1, 32, [out])
                    conn.ping()
                time.sleep(0.5)
                for _ in range(cfg.repeat):
                    loaded.append(_small_calls(probe, calls))
            finally:
                for conn in spinners:
                    conn.close()
        for k, what in enumerate(("NULL call", "4 KiB copy to the device and back")):
            res.rows.append(Row(f"{what} while {SPINNERS} other sessions run endless kernels",
                                Sample.of([x[k] for x in loaded], "s"), Sample.of([x[k] for x in quiet], "s"),
                                "same calls, no kernels running", ("<=", 2.0)))
        progress("two sessions' kernels against one")
        seconds = 0.1 if cfg.tiny else 0.3
        launches = 2 if cfg.tiny else 4
        with connect(server.address) as a, connect(server.address) as b:
            n = _calibrate(a.load_module(PTX).get_function("count"), seconds)
            _kernels_in([b], n, 1)                   # b's worker compiles the kernel
            one = [_kernels_in([a], n, launches) for _ in range(cfg.repeat)]
            two = [_kernels_in([a, b], n, launches) for _ in range(cfg.repeat)]
        res.rows.append(Row("kernels finished per second, two sessions at once vs one",
                            Sample.of(two, "/s"), Sample.of(one, "/s"), "one session", (">=", 1.6)))
        progress("one large kernel on every core against one")
        # The goal is for a large kernel (tens of ms on one core); the short one shows what a
        # spread launch costs on its own (one request and reply per worker, the arena's state).
        for iterations, goal in ((20 if cfg.tiny else 200, "—"), (200 if cfg.tiny else 2000, (">=", 1.6))):
            one, every, cores = _large_launch(cfg, iterations)
            res.rows.append(Row(f"one launch of many CTAs ({iterations} steps a thread), spread over "
                                f"{cores} cores vs one (time)", Sample.of(every, "s"), Sample.of(one, "s"),
                                "one core", goal, ratio_of="ref/ours"))
        res.notes.append(f"kernels: each session's emu kernels run in a worker process of its own; "
                         f"{SPINNERS} endless kernels fill every core, so the small calls' ratio shows "
                         "what the server's event loop keeps of a core; two sessions' kernels reach 2x "
                         "one's only where two cores are free")
    finally:
        server.stop()
    return res


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    res = measure(from_env(args.quick), lambda msg: print(f"# {msg}", file=sys.stderr))
    for row in res.rows:
        print(f"| {row.what} | {row.ours.median:.6g} | {row.reference.median:.6g} | {row.ratio:.2f} | "
              f"{row.goal_text()} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

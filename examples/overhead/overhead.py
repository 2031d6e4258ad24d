"""The remoting overhead test through cricket's Python client API: microseconds per call.

    python examples/overhead/overhead.py [--server HOST:PORT] [--backend emu] [--iterations N]
                                         [--fatbin overhead.fatbin]

The same cases as ``overhead.cu`` (which runs natively, or remoted by ``cricket run``), on a
connection to a cricket server (started here with ``--backend`` when no ``--server`` is given).
The kernels come from ``overhead.cu``, compiled by nvcc into a fatbin unless one is given.
``cudaGetDeviceCount`` is answered from the device list the server sent at connect time, as
cricket's client does; ``null_rpc`` is one real round trip for comparison. One line per case:
``overhead CASE US_PER_CALL``.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

CASES = ("cudaGetDeviceCount", "null_rpc", "malloc_free_1MiB", "launch_empty_sync",
         "launch_7params_sync", "launch_empty_async", "launch_7params_async")


def build_fatbin(out_dir: Path, arch: str = "sm_75") -> Path:
    """nvcc -fatbin: SASS and PTX of overhead.cu's kernels (the emu backend runs the PTX)."""
    if not shutil.which("nvcc"):
        raise SystemExit("overhead.py needs nvcc (CUDA 13) to compile overhead.cu, or --fatbin FILE")
    target = out_dir / f"overhead.{arch}.fatbin"
    r = subprocess.run(["nvcc", "-fatbin", f"-arch={arch}", "-o", str(target), str(HERE / "overhead.cu")],
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"nvcc failed on overhead.cu:\n{r.stderr}")
    return target


def _us_per_call(iterations: int, body, warmup: int = 10) -> float:
    for _ in range(warmup):
        body()
    t0 = time.perf_counter()
    for _ in range(iterations):
        body()
    return (time.perf_counter() - t0) / iterations * 1e6


def measure(address: str, fatbin: Path, iterations: int, launch_iterations: int | None = None
            ) -> dict[str, float]:
    """µs per call for every case in CASES, on one connection."""
    from cricket.client.api import connect
    from cricket.protocol import PROGRAM, VERSION
    launches = launch_iterations or iterations
    out: dict[str, float] = {}
    with connect(address) as gpu:
        mod = gpu.load_module(fatbin)
        empty = mod.get_function("empty_kernel")
        seven = mod.get_function("seven_params")
        a, b, c = gpu.alloc(1024), gpu.alloc(1024), gpu.alloc(1024)
        out["cudaGetDeviceCount"] = _us_per_call(iterations, lambda: len(gpu.devices))
        out["null_rpc"] = _us_per_call(iterations, lambda: gpu._rpc.call(PROGRAM, VERSION, 0))
        out["malloc_free_1MiB"] = _us_per_call(iterations, lambda: gpu.alloc(1 << 20).free())

        def empty_sync():
            empty(1, 32)
            gpu.synchronize()

        def seven_sync():
            seven(1, 32, a, b, c, 1, 2, 3, 4)
            gpu.synchronize()
        out["launch_empty_sync"] = _us_per_call(launches, empty_sync)
        out["launch_7params_sync"] = _us_per_call(launches, seven_sync)
        t = _us_per_call(launches, lambda: empty(1, 32))
        t0 = time.perf_counter()
        gpu.synchronize()                      # the queued launches finish: their time counts
        out["launch_empty_async"] = t + (time.perf_counter() - t0) * 1e6 / launches
        t = _us_per_call(launches, lambda: seven(1, 32, a, b, c, 1, 2, 3, 4))
        t0 = time.perf_counter()
        gpu.synchronize()
        out["launch_7params_async"] = t + (time.perf_counter() - t0) * 1e6 / launches
        for buf in (a, b, c):
            buf.free()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", help="HOST:PORT or Unix socket of a running cricket server")
    ap.add_argument("--backend", default="emu", help="backend of the server started here (no --server)")
    ap.add_argument("--iterations", type=int, default=10000)
    ap.add_argument("--launch-iterations", type=int, help="iterations of the launch cases (default: same)")
    ap.add_argument("--fatbin", type=Path, help="the kernels of overhead.cu (default: compile them)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cricket-overhead-") as tmp:
        fatbin = args.fatbin or build_fatbin(Path(tmp))
        server = None
        if not args.server:
            from bench.servers import CricketServer
            server = CricketServer(args.backend)
        try:
            res = measure(args.server or server.address, fatbin, args.iterations, args.launch_iterations)
        finally:
            if server:
                server.stop()
    for case in CASES:
        print(f"overhead {case} {res[case]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

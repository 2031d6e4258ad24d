"""Native CUDA references for the GPU run, measured with cuda-python in a process of their own.

    python bench/native_cuda.py copies SIZE... [--calls N]    prints JSON {"htod": {...}, "dtoh": {...}}

Host-to-device and device-to-host copies from pageable host memory (NumPy arrays), the same kind
of copy a cricket client makes, so ``bench/copies.py`` can set cricket beside the bare driver.
"""
from __future__ import annotations

import argparse
import json
import sys
import time


def _check(result):
    err = result[0]
    from cuda.bindings import driver
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA driver call failed: {err.name}")
    return result[1:] if len(result) > 2 else (result[1] if len(result) == 2 else None)


def copies(sizes: list[int], calls: int) -> dict[str, dict[int, float]]:
    import numpy as np
    from cuda.bindings import driver
    _check(driver.cuInit(0))
    dev = _check(driver.cuDeviceGet(0))
    ctx = _check(driver.cuDevicePrimaryCtxRetain(dev))
    _check(driver.cuCtxSetCurrent(ctx))
    out: dict[str, dict[int, float]] = {"htod": {}, "dtoh": {}}
    for size in sizes:
        host = np.zeros(size, np.uint8)
        dptr = _check(driver.cuMemAlloc(size))
        n = max(3, min(calls, (256 << 20) // size))
        for name, fn in (("htod", lambda: driver.cuMemcpyHtoD(dptr, host, size)),
                         ("dtoh", lambda: driver.cuMemcpyDtoH(host, dptr, size))):
            fn()
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            out[name][size] = size * n / (time.perf_counter() - t0)
        _check(driver.cuMemFree(dptr))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["copies"])
    ap.add_argument("sizes", nargs="+", type=int)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args(argv)
    print(json.dumps(copies(args.sizes, args.calls)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

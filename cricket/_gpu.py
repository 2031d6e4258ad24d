"""Is a real NVIDIA GPU usable from this process? Used to pick the default backend and to skip GPU tests."""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def gpu_unavailable_reason() -> str | None:
    """None when cuda-python finds at least one device, else why not (in words a user can act on)."""
    try:
        from cuda.bindings import driver
    except ImportError:
        return "cuda-python is not installed (pip install 'cricket[cuda]')"
    try:
        err, = driver.cuInit(0)
    except Exception as exc:  # the bindings raise when libcuda.so.1 cannot be loaded
        return f"the NVIDIA driver library could not be loaded: {exc}"
    if err != driver.CUresult.CUDA_SUCCESS:
        return f"cuInit failed: {err.name}"
    err, count = driver.cuDeviceGetCount()
    if err != driver.CUresult.CUDA_SUCCESS or count == 0:
        return "no CUDA device is visible"
    return None

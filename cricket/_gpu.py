"""Is a real NVIDIA GPU usable from this process? Used to pick the default backend and to skip GPU tests."""
from __future__ import annotations

import ctypes
import functools
import importlib.util


@functools.lru_cache(maxsize=1)
def gpu_unavailable_reason() -> str | None:
    """None when cuda-python finds at least one device, else why not (in words a user can act on)."""
    if importlib.util.find_spec("cuda") is None or importlib.util.find_spec("cuda.bindings") is None:
        return "cuda-python is not installed (pip install 'cricket[cuda]')"
    try:
        # the driver library first: without it, importing cuda-python (0.1-0.2 s) tells nothing more
        ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        return f"the NVIDIA driver library could not be loaded: {exc}"
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

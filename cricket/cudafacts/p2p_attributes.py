"""CUdevice_P2PAttribute / cudaDeviceP2PAttr: the attributes of the link between two devices
(the same values in both APIs; cuda.h, driver_types.h of CUDA 13)."""
from __future__ import annotations

PERFORMANCE_RANK = 1                     # a relative value for the link's performance
ACCESS_SUPPORTED = 2                     # 1 if peer access is supported
NATIVE_ATOMIC_SUPPORTED = 3              # 1 if all CUDA-valid atomics over the link are supported
CUDA_ARRAY_ACCESS_SUPPORTED = 4          # 1 if CUDA arrays can be accessed over the link
ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED = 5  # 1 if only some atomics over the link are supported

ALL = range(PERFORMANCE_RANK, ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED + 1)

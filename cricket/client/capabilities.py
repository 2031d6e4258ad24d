"""What the client itself provides or lacks, whatever the backend's device could do.

HELLO carries each device's attributes as its backend reports them; some describe what happens in
the application's process, which only the client decides. The connection applies these once to the
snapshot (``cricket.client.api.Connection``), so the runtime shim, the driver library and the
Python API all report the same values.
"""
from __future__ import annotations

from cricket.cudafacts import device_attributes as A

CLIENT_CAPABILITIES: dict[int, int] = {
    # mapped pinned memory is provided by the client (cricket.client.mapped) on every backend
    A.CAN_MAP_HOST_MEMORY: 1,
    A.HOST_REGISTER_SUPPORTED: 1,
    A.READ_ONLY_HOST_REGISTER_SUPPORTED: 1,     # its device copy is never written back
    # ... but registered memory's device pointer is its device copy's, not the host address
    A.CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: 0,
    # kernels cannot reach the application's other memory, nor its host atomics
    A.PAGEABLE_MEMORY_ACCESS: 0,
    A.PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES: 0,
    A.HOST_NATIVE_ATOMIC_SUPPORTED: 0,
    A.CONCURRENT_MANAGED_ACCESS: 0,
    A.DIRECT_MANAGED_MEM_ACCESS_FROM_HOST: 0,
    # refused by the client's launch policy (cricket.client.launch_attributes): no thread block
    # clusters, no cooperative launch over several devices (a cooperative launch on one device is
    # the backend's to report: cricket.client.cooperative)
    A.COOPERATIVE_MULTI_DEVICE_LAUNCH: 0,
    A.CLUSTER_LAUNCH: 0,
    # memory pools are the client's (cricket.client.mempool); their memory is not exported
    A.MEMORY_POOLS_SUPPORTED: 1,
    A.MEMPOOL_SUPPORTED_HANDLE_TYPES: 0,
    # managed memory is the client's (cricket.client.managed), coherent at synchronisation only
    A.MANAGED_MEMORY: 1,
    A.VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: 1,     # cuMemCreate/cuMemMap (cricket.client.vmm)
    A.IPC_EVENT_SUPPORTED: 1,                     # between clients of one server (cricket.client.ipc)
    # not implemented by the client: exportable (shareable) allocations, DMA-BUF, RDMA, multicast
    A.GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED: 0,
    A.HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: 0,
    A.HANDLE_TYPE_FABRIC_SUPPORTED: 0,
    A.DMA_BUF_SUPPORTED: 0,
    A.GPU_DIRECT_RDMA_SUPPORTED: 0,
    A.MULTICAST_SUPPORTED: 0,
    A.HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: 0,
    A.HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: 0,
}


def apply(attributes: dict[int, int]) -> dict[int, int]:
    """``attributes`` (one device's, from HELLO) with the client's capabilities in place."""
    return {**attributes, **{int(a): v for a, v in CLIENT_CAPABILITIES.items()}}

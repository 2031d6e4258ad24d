"""Launch attributes (``cudaLaunchKernelExC``, ``cuLaunchKernelEx``): which ones cricket honours.

One policy for the runtime and the driver path (``cudaLaunchAttributeID`` and
``CUlaunchAttributeID`` share their numbers and the array layout: a 4-byte id, 4 bytes of padding
and a 64-byte value union). Per the CUDA 13 headers' documentation of each attribute:

- **hints** change scheduling or caching, never results, and a launch that ignores them is a valid
  execution: access policy window, synchronisation policy, cluster scheduling policy, programmatic
  stream serialisation (serialising with the previous kernel is always allowed), priority, memory
  synchronisation domain and its map, preferred cluster dimension, shared-memory carveout, NVLink
  scheduling. They are accepted.
- **events** (programmatic event, launch completion event) are recorded on the launch's stream
  after the kernel: that is later than "all blocks triggered" or "all blocks began", which the
  documentation allows (dependents may observe the trigger long after the kernel completed).
- **a cooperative launch** (a nonzero cooperative value) makes the launch one of
  ``cricket.client.cooperative``: every block resident at once.
- **semantics the backend cannot honour** fail with cudaErrorNotSupported / CUDA_ERROR_NOT_SUPPORTED
  (the same number) and one log line naming the attribute: cluster dimensions other than 1×1×1
  (no thread block clusters), device-updatable kernel nodes (graphs only), and every id cricket
  does not know.
"""
from __future__ import annotations

import logging

from cricket.cudafacts.cudart_errors import CODES
from cricket.client.errors import CudaRuntimeError
from cricket.client.runtime import hostmem

log = logging.getLogger(__name__)

ERR_NOT_SUPPORTED = CODES["cudaErrorNotSupported"]
ERR_INVALID_VALUE = CODES["cudaErrorInvalidValue"]

ATTRIBUTE_SIZE = 72               # struct cudaLaunchAttribute_st / CUlaunchAttribute
VALUE_OFFSET = 8
MAX_ATTRIBUTES = 64               # far more than the ids that exist; a larger count is a bad pointer

NAMES = {
    0: "Ignore", 1: "AccessPolicyWindow", 2: "Cooperative", 3: "SynchronizationPolicy",
    4: "ClusterDimension", 5: "ClusterSchedulingPolicyPreference",
    6: "ProgrammaticStreamSerialization", 7: "ProgrammaticEvent", 8: "Priority",
    9: "MemSyncDomainMap", 10: "MemSyncDomain", 11: "PreferredClusterDimension",
    12: "LaunchCompletionEvent", 13: "DeviceUpdatableKernelNode",
    14: "PreferredSharedMemoryCarveout", 16: "NvlinkUtilCentricScheduling",
}
HINTS = frozenset({0, 1, 3, 5, 6, 8, 9, 10, 11, 14, 16})
EVENTS = frozenset({7, 12})
COOPERATIVE, CLUSTER_DIMENSION = 2, 4

_logged: set[str] = set()


class LaunchAttributeError(CudaRuntimeError):
    """A launch attribute cricket cannot honour (``code``: the cudaError_t, which is also the
    CUresult)."""


def name_of(attribute: int) -> str:
    return "cudaLaunchAttribute" + NAMES.get(attribute, f"{attribute} (unknown)")


def _refuse(call: str, attribute: int, why: str) -> LaunchAttributeError:
    message = f"{call}: {name_of(attribute)} {why}; the launch fails with cudaErrorNotSupported"
    if message not in _logged:         # one line per distinct refusal, not one per launch
        _logged.add(message)
        log.warning("%s", message)
    return LaunchAttributeError(ERR_NOT_SUPPORTED, message)


class LaunchEvents(list):
    """The event handles to record on the launch's stream after the kernel, and whether the
    launch is cooperative."""
    cooperative = False


def check(attrs: int, count: int, call: str) -> LaunchEvents:
    """Check the ``count`` attributes at address ``attrs``: the events to record after the kernel
    and whether it is a cooperative launch. Raises :class:`LaunchAttributeError` for an attribute
    cricket cannot honour (nothing has been launched then)."""
    events = LaunchEvents()
    if count == 0:
        return events
    if not attrs or count > MAX_ATTRIBUTES:
        raise LaunchAttributeError(ERR_INVALID_VALUE, f"{call}: {count} launch attributes at {attrs:#x}")
    for i in range(count):
        base = attrs + ATTRIBUTE_SIZE * i
        attribute = hostmem.load_u32(base)
        value = base + VALUE_OFFSET
        if attribute in HINTS:
            continue
        if attribute in EVENTS:
            event = hostmem.load_u64(value)
            if event:
                events.append(event)
        elif attribute == COOPERATIVE:
            events.cooperative = bool(hostmem.load_u32(value))
        elif attribute == CLUSTER_DIMENSION:
            dims = (hostmem.load_u32(value), hostmem.load_u32(value + 4), hostmem.load_u32(value + 8))
            if dims != (1, 1, 1):
                raise _refuse(call, attribute, f"asks for clusters of {dims[0]}×{dims[1]}×{dims[2]} "
                              "blocks, and cricket's backends have no thread block clusters")
        elif attribute in NAMES:
            raise _refuse(call, attribute, "applies to CUDA graphs, which cricket does not implement")
        else:
            raise _refuse(call, attribute, "is not an attribute cricket knows")
    return events

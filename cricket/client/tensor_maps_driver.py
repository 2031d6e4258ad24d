"""``cuTensorMapEncodeTiled`` and ``cuTensorMapReplaceAddress`` (forwarded by cext/driver/tensor_maps.c).

A CUtensorMap lives in the program's memory and travels to kernels as a parameter, so it is built
here, on the client, in the layout the emu interpreter reads (``cricket.cudafacts.tensor_map``).
On the cuda backend the map would have to be NVIDIA's own, which only the real driver can write:
those calls answer CUDA_ERROR_NOT_SUPPORTED, with a log line.
"""
from __future__ import annotations

import logging
import struct

from cricket.client.driver_face import DRIVER_API, DriverApiError
from cricket.client.faces import implements
from cricket.client.runtime import RUNTIME as rt
from cricket.client.runtime import hostmem
from cricket.cudafacts import tensor_map as tm
from cricket.cudafacts.curesult import INVALID_VALUE, NOT_SUPPORTED

log = logging.getLogger(__name__)


def _check_backend(what: str) -> None:
    if not rt.conn.emulated:
        raise DriverApiError(NOT_SUPPORTED, f"{what}: tensor maps for the {rt.conn.backend} backend need "
                                            "NVIDIA's driver on the client; cricket builds them for emu only")


def _words(addr: int, n: int, fmt: str) -> tuple[int, ...]:
    if not addr:
        raise DriverApiError(INVALID_VALUE, "NULL array argument")
    size = struct.calcsize(fmt)
    return struct.unpack(f"<{n}{fmt}", hostmem.read(addr, n * size))


@implements(DRIVER_API, "cuTensorMapEncodeTiled")
def encode_tiled(out: int, data_type: int, rank: int, address: int, dims_at: int, strides_at: int, box_at: int,
                 element_strides_at: int, interleave: int, swizzle: int, l2_promotion: int, oob_fill: int) -> int:
    if not out or out % tm.ALIGN or not 1 <= rank <= tm.MAX_RANK or l2_promotion > 3:
        raise DriverApiError(INVALID_VALUE, f"cuTensorMapEncodeTiled: map at {out:#x} (64-byte aligned), rank "
                                            f"{rank}, L2 promotion {l2_promotion}")
    _check_backend("cuTensorMapEncodeTiled")
    strides = _words(strides_at, rank - 1, "Q") if rank > 1 else ()
    try:
        m = tm.encode_tiled(data_type, rank, address, _words(dims_at, rank, "Q"), strides,
                            _words(box_at, rank, "I"), _words(element_strides_at, rank, "I"), interleave,
                            swizzle, oob_fill)
    except tm.TensorMapUnsupported as e:
        raise DriverApiError(NOT_SUPPORTED, f"cuTensorMapEncodeTiled: {e}") from None
    except tm.TensorMapError as e:
        raise DriverApiError(INVALID_VALUE, f"cuTensorMapEncodeTiled: {e}") from None
    hostmem.write(out, m.pack())
    return 0


@implements(DRIVER_API, "cuTensorMapReplaceAddress")
def replace_address(map_at: int, address: int) -> int:
    if not map_at or map_at % tm.ALIGN:
        raise DriverApiError(INVALID_VALUE, f"cuTensorMapReplaceAddress: map at {map_at:#x} (64-byte aligned)")
    try:
        m = tm.TiledTensorMap.unpack(hostmem.read(map_at, tm.SIZE))
        m = tm.encode_tiled(m.data_type, m.rank, address, m.dims, m.strides[1:], m.box, m.element_strides,
                            tm.INTERLEAVE_NONE, m.swizzle, m.oob_fill)
    except tm.TensorMapError as e:
        raise DriverApiError(INVALID_VALUE, f"cuTensorMapReplaceAddress: {e}") from None
    hostmem.write(map_at, m.pack())
    return 0

"""Pure-Python twin of ``cricket._cext.hostmem``: the application's memory at raw addresses, through
ctypes. Same functions, same results; slower."""
from __future__ import annotations

import ctypes
from collections.abc import Iterable
from typing import Any


def store_i32(addr: int, value: int) -> None:
    ctypes.c_int32.from_address(addr).value = value


def store_u32(addr: int, value: int) -> None:
    ctypes.c_uint32.from_address(addr).value = value


def store_u64(addr: int, value: int) -> None:
    ctypes.c_uint64.from_address(addr).value = value


def store_i64s(addr: int, values: Iterable[int]) -> None:
    for i, v in enumerate(values):
        ctypes.c_int64.from_address(addr + 8 * i).value = v


def store_f32(addr: int, value: float) -> None:
    ctypes.c_float.from_address(addr).value = value


def load_u64(addr: int) -> int:
    return ctypes.c_uint64.from_address(addr).value


def load_u32(addr: int) -> int:
    return ctypes.c_uint32.from_address(addr).value


def read(addr: int, size: int) -> bytes:
    return ctypes.string_at(addr, size)


def write(addr: int, data: Any) -> None:
    view = memoryview(data).cast("B")
    if view.nbytes:
        ctypes.memmove(addr, (ctypes.c_char * view.nbytes).from_buffer_copy(view) if view.readonly
                       else (ctypes.c_char * view.nbytes).from_buffer(view), view.nbytes)


def view(addr: int, size: int) -> memoryview:
    if not size:
        return memoryview(b"")
    return memoryview((ctypes.c_char * size).from_address(addr)).cast("B")


def pack_params(args: int, layout: tuple, param_size: int) -> bytes:
    buf = bytearray(param_size)
    for i, (offset, size) in enumerate(layout):
        ptr = ctypes.c_void_p.from_address(args + 8 * i).value
        buf[offset:offset + size] = ctypes.string_at(ptr, size)
    return bytes(buf)


def launch_record(function: int, grid: tuple, block: tuple, shared_mem: int, stream: int, args: int,
                  layout: tuple, param_size: int) -> bytes:
    """The XDR encoding of ``cr_launch_args`` with the parameters packed from ``args``."""
    from cricket.protocol import gen as P
    params = pack_params(args, layout, param_size) if layout else bytes(param_size)
    head = P.pack_cr_launch_args_fixed(
        function=function, grid_x=grid[0], grid_y=grid[1], grid_z=grid[2], block_x=block[0],
        block_y=block[1], block_z=block[2], shared_mem=shared_mem, stream=stream,
        params_len=param_size)
    return head + params + b"\0" * (-param_size % 4)


def launch_call(head: bytes, xid: int, function: int, gxy: int, gz: int, bxy: int, bz: int,
                shared_mem: int, stream: int, args: int, layout: tuple, param_size: int,
                limits: tuple) -> bytes | None:
    """A whole batched ``CR_LAUNCH_ASYNC`` call record (``head`` with its record mark and xid
    filled in, then ``cr_launch_args``), or None when the configuration breaks ``limits``."""
    gx, gy, bx, by = gxy & 0xFFFFFFFF, gxy >> 32 & 0xFFFFFFFF, bxy & 0xFFFFFFFF, bxy >> 32 & 0xFFFFFFFF
    gz, bz = gz & 0xFFFFFFFF, bz & 0xFFFFFFFF
    max_threads, mbx, mby, mbz, mgx, mgy, mgz, max_shared = limits
    if (not 0 < bx * by * bz <= max_threads or not gx * gy * gz or bx > mbx or by > mby
            or bz > mbz or gx > mgx or gy > mgy or gz > mgz or shared_mem > max_shared):
        return None
    body = launch_record(function, (gx, gy, gz), (bx, by, bz), shared_mem, stream, args, layout,
                         param_size)
    total = len(head) + len(body)
    # RFC 5531: the record mark (last fragment, length after the mark), then the call's xid.
    return ((0x80000000 | (total - 4)).to_bytes(4, "big") + (xid & 0xFFFFFFFF).to_bytes(4, "big")
            + head[8:] + body)

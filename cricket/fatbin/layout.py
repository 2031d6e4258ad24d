"""Kernel parameter layouts: what the client needs to pack ``void **args`` at launch."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Sequence

from .errors import FatbinError


@dataclass(frozen=True)
class KernelParam:
    """One kernel parameter: where it sits in the parameter buffer and how big it is."""
    ordinal: int
    offset: int
    size: int
    #: True/False where the image says (sm_100+ cubins, PTX ``.ptr``); None where it does not.
    is_pointer: bool | None = None
    #: alignment in bytes, when the source states it (PTX), else None
    align: int | None = None


@dataclass(frozen=True)
class KernelLayout:
    """A kernel's parameters and launch-relevant attributes, from a cubin or from PTX."""
    name: str
    params: tuple[KernelParam, ...]
    #: bytes in the parameter buffer (CBANK_PARAM_SIZE, or the end of the last parameter for PTX)
    param_size: int
    source: str                                     # "cubin" or "ptx"
    arch: int                                       # SM number of the image it came from
    #: offset of the parameters in constant bank 0 (cubin only)
    param_base: int | None = None
    #: ``__launch_bounds__`` / ``.maxntid`` (x, y, z)
    max_threads: tuple[int, int, int] | None = None
    #: ``.reqntid`` (x, y, z)
    reqntid: tuple[int, int, int] | None = None
    registers: int | None = None
    max_registers: int | None = None
    #: bytes of static ``__shared__`` memory the image reserves (``.nv.shared.<kernel>``; on
    #: sm_90+ this includes the 1 KiB the system reserves when the kernel uses shared memory)
    shared_static: int | None = None
    frame_size: int | None = None
    #: True when the parameters came from KPARAM_INFO_V2 records (total over 4352 bytes)
    params_v2: bool = False
    #: every ``.nv.info.<kernel>`` record, known and unknown (cubin only)
    records: tuple = field(default=(), repr=False, compare=False)

    @property
    def offsets_and_sizes(self) -> list[tuple[int, int, int]]:
        """``[(ordinal, offset, size), ...]``: what two layouts must agree on."""
        return [(p.ordinal, p.offset, p.size) for p in self.params]

    def pack(self, values: Sequence[bytes]) -> bytes:
        """Place each parameter's bytes at its offset; gaps are zero."""
        if len(values) != len(self.params):
            raise FatbinError(f"kernel {self.name} takes {len(self.params)} parameters, "
                              f"got {len(values)}")
        buf = bytearray(self.param_size)
        for p, v in zip(self.params, values):
            if len(v) != p.size:
                raise FatbinError(f"kernel {self.name} parameter {p.ordinal} is {p.size} bytes, "
                                  f"got {len(v)}")
            buf[p.offset:p.offset + p.size] = v
        return bytes(buf)

    def pack_from_pointers(self, args_address: int) -> bytes:
        """Pack from a ``void **args`` array in this process (what ``cudaLaunchKernel`` receives).

        Reads one pointer per parameter and ``size`` bytes behind each; the caller
        guarantees the array is valid, as the CUDA runtime does.
        """
        n = len(self.params)
        if n == 0:
            return b""
        if not args_address:
            raise FatbinError(f"kernel {self.name} takes {n} parameters but args is NULL")
        pointers = (ctypes.c_void_p * n).from_address(args_address)
        buf = bytearray(self.param_size)
        for p, ptr in zip(self.params, pointers):
            if not ptr:
                raise FatbinError(f"kernel {self.name}: args[{p.ordinal}] is NULL")
            buf[p.offset:p.offset + p.size] = ctypes.string_at(ptr, p.size)
        return bytes(buf)

    def as_dict(self) -> dict:
        return {
            "name": self.name, "source": self.source, "arch": self.arch,
            "param_size": self.param_size, "param_base": self.param_base,
            "params": [{"ordinal": p.ordinal, "offset": p.offset, "size": p.size,
                        "is_pointer": p.is_pointer} for p in self.params],
            "params_v2": self.params_v2,
            "max_threads": list(self.max_threads) if self.max_threads else None,
            "reqntid": list(self.reqntid) if self.reqntid else None,
            "registers": self.registers, "max_registers": self.max_registers,
            "shared_static": self.shared_static, "frame_size": self.frame_size,
        }

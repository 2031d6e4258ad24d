"""``.nv.info`` attribute records (EIATTR), named once.

A record is ``u8 format, u8 attribute, u16 v``. For the formats NVAL, BVAL and
HVAL the value is ``v`` and the record is 4 bytes; for SVAL ``v`` is the length
of the payload that follows. Records are variable length, so a section is
walked, never indexed with a fixed stride (``-G`` adds 4-byte records to the
global ``.nv.info``).
"""
from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

from .errors import CubinError


class EIFormat(enum.IntEnum):
    NVAL = 1        # no value
    BVAL = 2        # byte value in v
    HVAL = 3        # half-word value in v
    SVAL = 4        # v = byte length of the payload that follows


# Ids in enum order, as in the pointer table inside CUDA 13.0 nvlink (0x57-0x59
# keep their 12.x names; 0x56 is UNKNOWN in 13.0 where 12.x had SANITIZE).
EIATTR_NAMES: tuple[str, ...] = (
    "ERROR", "PAD", "IMAGE_SLOT", "JUMPTABLE_RELOCS", "CTAIDZ_USED", "MAX_THREADS",
    "IMAGE_OFFSET", "IMAGE_SIZE", "TEXTURE_NORMALIZED", "SAMPLER_INIT", "PARAM_CBANK",
    "SMEM_PARAM_OFFSETS", "CBANK_PARAM_OFFSETS", "SYNC_STACK", "TEXID_SAMPID_MAP", "EXTERNS",
    "REQNTID", "FRAME_SIZE", "MIN_STACK_SIZE", "SAMPLER_FORCE_UNNORMALIZED",
    "BINDLESS_IMAGE_OFFSETS", "BINDLESS_TEXTURE_BANK", "BINDLESS_SURFACE_BANK", "KPARAM_INFO",
    "SMEM_PARAM_SIZE", "CBANK_PARAM_SIZE", "QUERY_NUMATTRIB", "MAXREG_COUNT",
    "EXIT_INSTR_OFFSETS", "S2RCTAID_INSTR_OFFSETS", "CRS_STACK_SIZE", "NEED_CNP_WRAPPER",
    "NEED_CNP_PATCH", "EXPLICIT_CACHING", "ISTYPEP_USED", "MAX_STACK_SIZE", "SUQ_USED",
    "LD_CACHEMOD_INSTR_OFFSETS", "LOAD_CACHE_REQUEST", "ATOM_SYS_INSTR_OFFSETS",
    "COOP_GROUP_INSTR_OFFSETS", "COOP_GROUP_MASK_REGIDS", "SW1850030_WAR", "WMMA_USED",
    "HAS_PRE_V10_OBJECT", "ATOMF16_EMUL_INSTR_OFFSETS", "ATOM16_EMUL_INSTR_REG_MAP", "REGCOUNT",
    "SW2393858_WAR", "INT_WARP_WIDE_INSTR_OFFSETS", "SHARED_SCRATCH", "STATISTICS",
    "INDIRECT_BRANCH_TARGETS", "SW2861232_WAR", "SW_WAR", "CUDA_API_VERSION", "NUM_MBARRIERS",
    "MBARRIER_INSTR_OFFSETS", "COROUTINE_RESUME_OFFSETS", "SAM_REGION_STACK_SIZE",
    "PER_REG_TARGET_PERF_STATS", "CTA_PER_CLUSTER", "EXPLICIT_CLUSTER", "MAX_CLUSTER_RANK",
    "INSTR_REG_MAP", "RESERVED_SMEM_USED", "RESERVED_SMEM_0_SIZE", "UCODE_SECTION_DATA",
    "UNUSED_LOAD_BYTE_OFFSET", "KPARAM_INFO_V2", "SYSCALL_OFFSETS",
    "SW_WAR_MEMBAR_SYS_INSTR_OFFSETS", "GRAPHICS_GLOBAL_CBANK", "SHADER_TYPE",
    "VRC_CTA_INIT_COUNT", "TOOLS_PATCH_FUNC", "NUM_BARRIERS", "TEXMODE_INDEPENDENT",
    "PERF_STATISTICS", "AT_ENTRY_FRAGMENTS", "SPARSE_MMA_MASK", "TCGEN05_1CTA_USED",
    "TCGEN05_2CTA_USED", "GEN_ERRBAR_AT_EXIT", "REG_RECONFIG", "ANNOTATIONS", "UNKNOWN",
    "STACK_CANARY_TRAP_OFFSETS", "STUB_FUNCTION_KIND", "LOCAL_CTA_ASYNC_STORE_OFFSETS",
    "MERCURY_FINALIZER_OPTIONS", "BLOCKS_ARE_CLUSTERS", "SANITIZE", "SYSCALLS_FALLBACK",
    "CUDA_REQ", "MERCURY_ISA_VERSION", "ERROR_LAST",
)
assert EIATTR_NAMES[0x17] == "KPARAM_INFO" and EIATTR_NAMES[0x45] == "KPARAM_INFO_V2"
assert EIATTR_NAMES[0x5F] == "MERCURY_ISA_VERSION" and len(EIATTR_NAMES) == 0x61

EIAttr = enum.IntEnum("EIAttr", {name: i for i, name in enumerate(EIATTR_NAMES)})

_RECORD_HEAD = struct.Struct("<BBH")


@dataclass(frozen=True)
class NvInfoRecord:
    """One ``.nv.info`` record; unknown attributes and formats are kept as they are."""
    format: int
    attribute: int
    value: int | None               # NVAL/BVAL/HVAL: the value; SVAL: None
    data: bytes | None              # SVAL: the payload; others: None

    @property
    def name(self) -> str:
        if self.attribute < len(EIATTR_NAMES):
            return "EIATTR_" + EIATTR_NAMES[self.attribute]
        return f"EIATTR_0x{self.attribute:02x}"

    @property
    def format_name(self) -> str:
        try:
            return "EIFMT_" + EIFormat(self.format).name
        except ValueError:
            return f"EIFMT_0x{self.format:02x}"

    def as_dict(self) -> dict:
        return {"attribute": self.name, "format": self.format_name, "value": self.value,
                "data": self.data.hex() if self.data is not None else None}


def parse_records(data: bytes, where: str) -> list[NvInfoRecord]:
    """All records of one ``.nv.info`` section; :class:`CubinError` if one runs past the end."""
    records = []
    pos, end = 0, len(data)
    while pos < end:
        if end - pos < _RECORD_HEAD.size:
            raise CubinError(f"{where}: {end - pos} stray bytes at offset {pos} after the last record")
        fmt, attr, v = _RECORD_HEAD.unpack_from(data, pos)
        pos += _RECORD_HEAD.size
        if fmt == EIFormat.SVAL:
            if v > end - pos:
                raise CubinError(f"{where}: record {_name(attr)} at offset {pos - 4} claims {v} bytes, "
                                 f"only {end - pos} left")
            records.append(NvInfoRecord(fmt, attr, None, bytes(data[pos:pos + v])))
            pos += v
        elif fmt in (EIFormat.NVAL, EIFormat.BVAL, EIFormat.HVAL):
            records.append(NvInfoRecord(fmt, attr, v, None))
        else:
            raise CubinError(f"{where}: record at offset {pos - 4} has unknown format {fmt}; "
                             f"cannot tell its length")
    return records


def _name(attr: int) -> str:
    return NvInfoRecord(0, attr, None, None).name

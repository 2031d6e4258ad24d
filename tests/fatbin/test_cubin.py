"""Cubin metadata: arch from e_flags, kernels by STO_CUDA_ENTRY, .nv.info records kept whole."""
from __future__ import annotations

import struct

import pytest

from cricket.fatbin import CubinError, Fatbin, KernelNotFoundError, arch_from_e_flags
from cricket.fatbin.eiattr import EIAttr, EIFormat, parse_records

from .helpers import fixture
from .signatures import PARAMS_KERNELS


def cubins():
    out = []
    for name in ("params_sm75_zstd.fatbin", "params_multi.fatbin"):
        out += [e for e in Fatbin.from_file(str(fixture(name))).entries if e.is_elf]
    return out


def test_arch_comes_from_e_flags_bits_8_to_15_in_abi_v8():
    for entry in cubins():
        c = entry.cubin
        assert (c.osabi, c.abi_version) == (0x41, 8)
        assert c.arch == entry.arch == (c.e_flags >> 8) & 0xFF
    assert arch_from_e_flags(0x06005A04, 8) == 90
    assert arch_from_e_flags(0x00000046, 7) == 0x46        # pre-CUDA-13 layout: the low byte


def test_kernels_are_the_functions_marked_sto_cuda_entry():
    for entry in cubins():
        c = entry.cubin
        assert set(c.kernel_names) == set(PARAMS_KERNELS)
        assert all(s.other & 0x10 for s in c.symbols if s.name in PARAMS_KERNELS)
        assert not any(s.is_kernel for s in c.symbols if s.name not in PARAMS_KERNELS)
        with pytest.raises(KernelNotFoundError, match="no kernel 'g_dev_var'"):
            c.kernel("g_dev_var")


def test_records_keep_every_attribute_including_ones_without_meaning_to_us():
    c = cubins()[0].cubin
    records = c.kernel("_Z7k_typescsixfdPi3S24h3V16").records
    names = [r.name for r in records]
    assert names.count("EIATTR_KPARAM_INFO") == 10
    api = next(r for r in records if r.attribute == EIAttr.CUDA_API_VERSION)
    assert api.format == EIFormat.SVAL and struct.unpack("<I", api.data)[0] == 130    # CUDA 13.0
    global_names = {r.name for r in c.nv_info()}
    assert {"EIATTR_REGCOUNT", "EIATTR_FRAME_SIZE"} <= global_names


def test_unknown_attributes_and_formats():
    data = bytes([4, 0x7F, 3, 0, 1, 2, 3]) + bytes([3, 0x19, 0x60, 0]) + bytes([1, 0x53, 0, 0])
    records = parse_records(data, "test")
    assert [(r.name, r.value, r.data) for r in records] == [
        ("EIATTR_0x7f", None, b"\x01\x02\x03"), ("EIATTR_CBANK_PARAM_SIZE", 0x60, None),
        ("EIATTR_GEN_ERRBAR_AT_EXIT", 0, None)]
    with pytest.raises(CubinError, match="unknown format 9"):
        parse_records(bytes([9, 1, 0, 0]), "test")
    with pytest.raises(CubinError, match="claims 200 bytes, only 0 left"):
        parse_records(bytes([4, 0x17, 200, 0]), "test")

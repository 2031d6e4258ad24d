"""Kernel layouts decoded from the committed fixtures agree with the kernel signatures (no nvcc needed)."""
from __future__ import annotations

import pytest

from cricket.fatbin import Fatbin, KernelNotFoundError

from .helpers import FIXTURE_FILES, fixture
from .signatures import (MAX_THREADS, PARAMS_KERNELS, SHARED, VARIABLES, check_kernel_against_signature,
                         pointer_mask)


@pytest.fixture(params=FIXTURE_FILES)
def fatbin(request) -> Fatbin:
    return Fatbin.from_file(str(fixture(request.param)))


def test_every_cubin_kernel_matches_its_signature(fatbin):
    cubins = [e.cubin for e in fatbin.entries if e.is_elf]
    assert cubins
    for cubin in cubins:
        assert set(cubin.kernel_names) == set(PARAMS_KERNELS)
        for name, types in PARAMS_KERNELS.items():
            check_kernel_against_signature(cubin.kernel(name), types)


def test_every_ptx_entry_matches_its_signature(fatbin):
    modules = [e.ptx for e in fatbin.entries if e.is_ptx]
    assert modules
    for module in modules:
        assert set(module.entry_names) == set(PARAMS_KERNELS)
        for name, types in PARAMS_KERNELS.items():
            check_kernel_against_signature(module.kernel(name), types)


def test_cubin_and_ptx_layouts_agree(fatbin):
    ptx = [e.ptx for e in fatbin.entries if e.is_ptx]
    for entry in (e for e in fatbin.entries if e.is_elf):
        for name in entry.cubin.kernel_names:
            for module in ptx:
                a, b = entry.cubin.kernel(name), module.kernel(name)
                assert a.offsets_and_sizes == b.offsets_and_sizes
                assert a.param_size == b.param_size


def test_launch_attributes_and_variables(fatbin):
    for entry in (e for e in fatbin.entries if e.is_elf):
        cubin = entry.cubin
        for name in PARAMS_KERNELS:
            k = cubin.kernel(name)
            # sm_90+ images reserve 1 KiB of shared memory in front of a kernel's own
            # (.nv.shared.reserved.0), and the section size includes it.
            reserved = 1024 if cubin.arch >= 90 and name in SHARED else 0
            assert k.shared_static == SHARED.get(name, 0) + reserved, name
            assert k.max_threads == MAX_THREADS.get(name), name
            assert k.registers and 0 < k.registers <= 255
        found = {v.name: (v.kind, v.size) for v in cubin.variables}
        assert found == VARIABLES
    for entry in (e for e in fatbin.entries if e.is_ptx):
        assert entry.ptx.kernel("_Z8k_boundsPf").max_threads == (128, 1, 1)


def test_sm100_cubin_marks_pointer_parameters():
    fb = Fatbin.from_file(str(fixture("params_multi.fatbin")))
    sm100 = next(e for e in fb.entries if e.is_elf and e.arch == 100)
    for name, types in PARAMS_KERNELS.items():
        assert [p.is_pointer for p in sm100.cubin.kernel(name).params] == pointer_mask(types)
    ptx100 = next(e for e in fb.entries if e.is_ptx and e.arch == 100)
    for name, types in PARAMS_KERNELS.items():
        assert [bool(p.is_pointer) for p in ptx100.ptx.kernel(name).params] == pointer_mask(types)


def test_param_base_depends_on_arch_and_v2():
    bases = {}
    for f in ("params_sm75_zstd.fatbin", "params_multi.fatbin"):
        for e in Fatbin.from_file(str(fixture(f))).entries:
            if e.is_elf:
                bases[e.arch] = (e.cubin.kernel("k_externc").param_base,
                                 e.cubin.kernel("_Z6k_hugei7Big8192Pf").param_base)
    assert bases == {75: (0x160, 0x1A80), 90: (0x210, 0x210), 100: (0x380, 0x380)}


def test_fatbin_kernel_lookup_prefers_the_arch_image_and_caches():
    fb = Fatbin.from_file(str(fixture("params_multi.fatbin")))
    k90 = fb.kernel("k_externc", arch=90)
    k100 = fb.kernel("k_externc", arch=100)
    assert (k90.source, k90.arch, k100.arch) == ("cubin", 90, 100)
    assert fb.kernel("k_externc", arch=90) is k90
    with pytest.raises(KernelNotFoundError, match="no kernel 'nope'"):
        fb.kernel("nope")


def test_layout_packs_arguments_at_their_offsets():
    import ctypes
    fb = Fatbin.from_file(str(fixture("params_sm75_zstd.fatbin")))
    k = fb.kernel("k_externc")
    packed = k.pack([(7).to_bytes(4, "little"), (0x1122334455667788).to_bytes(8, "little")])
    assert packed == (7).to_bytes(4, "little") + b"\0" * 4 + (0x1122334455667788).to_bytes(8, "little")
    n = ctypes.c_int(7)
    p = ctypes.c_uint64(0x1122334455667788)
    args = (ctypes.c_void_p * 2)(ctypes.addressof(n), ctypes.addressof(p))
    assert k.pack_from_pointers(ctypes.addressof(args)) == packed

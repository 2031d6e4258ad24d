"""Programs nvcc builds at test time, in every variant the issue lists: layouts match the signatures."""
from __future__ import annotations

import pytest

from cricket.fatbin import Compression, EntryFlag, find_device_code

from .signatures import PARAMS_KERNELS, RDC_KERNELS, VARIABLES, check_kernel_against_signature, expected_layout
from .variants import VARIANTS

pytestmark = pytest.mark.nvcc

LINKED = [n for n, (_, _, out) in VARIANTS.items() if out == "app" or n == "lib"]


def kernels_of(variant: str) -> dict[str, list[str]]:
    return {**PARAMS_KERNELS, **RDC_KERNELS} if variant == "rdc" else dict(PARAMS_KERNELS)


@pytest.mark.parametrize("variant", LINKED)
def test_registered_fatbins_hold_every_kernel_with_the_signature_layout(nvcc_builds, variant):
    code = find_device_code(nvcc_builds.path(variant))
    registered = code.registered()
    assert registered, "no fatbin would reach __cudaRegisterFatBinary"
    for name, types in kernels_of(variant).items():
        holders = [f for f in registered if name in f.kernel_names()]
        assert len(holders) == 1, name
        fb = holders[0]
        check_kernel_against_signature(fb.kernel(name), types)
        # every image that has the kernel agrees: each cubin and each PTX
        for e in fb.all_entries():
            if e.is_elf and e.cubin.has_kernel(name):
                check_kernel_against_signature(e.cubin.kernel(name), types)
            if e.is_ptx and e.ptx.has_kernel(name):
                check_kernel_against_signature(e.ptx.kernel(name), types)


@pytest.mark.parametrize("variant", LINKED)
def test_cubin_and_ptx_agree_for_every_kernel(nvcc_builds, variant):
    code = find_device_code(nvcc_builds.path(variant))
    compared = 0
    for fb in code.fatbins:
        containers = [fb, *fb.prelinked]
        for c in containers:
            ptx = [e.ptx for e in c.entries if e.is_ptx]
            for e in (e for e in c.entries if e.is_elf):
                for name in e.cubin.kernel_names:
                    for m in ptx:
                        if m.has_kernel(name):
                            assert e.cubin.kernel(name).offsets_and_sizes == m.kernel(name).offsets_and_sizes
                            assert e.cubin.kernel(name).param_size == m.kernel(name).param_size
                            compared += 1
    assert compared >= len(PARAMS_KERNELS)


@pytest.mark.parametrize("variant", LINKED)
def test_device_and_constant_variables_have_their_sizes(nvcc_builds, variant):
    code = find_device_code(nvcc_builds.path(variant))
    found = {}
    for fb in code.fatbins:
        for e in fb.all_entries():
            if e.is_elf:
                found.update({v.name: (v.kind, v.size) for v in e.cubin.variables})
    for name, want in VARIABLES.items():
        assert found.get(name) == want


def compressions(variant, nvcc_builds) -> dict[str, set[Compression]]:
    """{ "ELF": {...}, "PTX": {...} } over the registered fatbins of a variant."""
    code = find_device_code(nvcc_builds.path(variant))
    out: dict[str, set[Compression]] = {"ELF": set(), "PTX": set()}
    for fb in code.registered():
        for e in fb.entries:
            out[e.kind_name].add(e.compression)
    return out


@pytest.mark.parametrize("variant, elf, ptx", [
    ("default", Compression.NONE, Compression.ZSTD),
    ("cm_default", Compression.NONE, Compression.ZSTD),
    ("cm_balance", Compression.NONE, Compression.ZSTD),
    ("cm_size", Compression.ZSTD, Compression.ZSTD),
    ("cm_speed", Compression.NONE, Compression.LZ4_BLOCK),
    ("cm_none", Compression.NONE, Compression.NONE),
    ("compress_all", Compression.ZSTD, Compression.ZSTD),
    ("debug", Compression.ZSTD, Compression.ZSTD),
])
def test_each_compress_mode_writes_what_it_should_and_decodes(nvcc_builds, variant, elf, ptx):
    got = compressions(variant, nvcc_builds)
    assert got["ELF"] == {elf}
    assert got["PTX"] <= {ptx}


def test_arch_and_gencode_variants_hold_the_requested_images(nvcc_builds):
    def images(variant):
        code = find_device_code(nvcc_builds.path(variant))
        fb = next(f for f in code.registered() if "k_externc" in f.kernel_names())
        return fb, sorted((e.kind_name, e.arch) for e in fb.entries)

    assert images("sm75")[1] == [("ELF", 75), ("PTX", 75)]
    assert images("sm90")[1] == [("ELF", 90), ("PTX", 90)]
    fb, got = images("gencode")
    assert got == [("ELF", 75), ("ELF", 90), ("ELF", 100), ("PTX", 90)]
    assert fb.select_image(90).arch == 90 and fb.select_image(90).is_elf
    assert fb.select_image(103).arch == 100 and fb.select_image(103).is_elf
    assert fb.select_image(120).is_ptx
    for arch in (75, 90, 100):
        assert fb.kernel("_Z5k_big7Big4000i", arch=arch).arch == arch


def test_debug_and_lineinfo_images_carry_their_options(nvcc_builds):
    fb = next(f for f in find_device_code(nvcc_builds.path("debug")).registered()
              if "k_externc" in f.kernel_names())
    assert all(e.flags & EntryFlag.DEBUG for e in fb.entries)
    # -G puts a 4-byte NVAL record among the 12-byte ones of the global .nv.info
    from cricket.fatbin import EIAttr
    cubin = next(e.cubin for e in fb.entries if e.is_elf)
    assert any(r.attribute == EIAttr.GEN_ERRBAR_AT_EXIT and r.data is None for r in cubin.nv_info())
    assert cubin.kernel("k_externc").registers
    ptx = next(e for e in fb.entries if e.is_ptx)
    assert "-g" in ptx.options.split() and ptx.name.endswith("params.cu")
    fb = next(f for f in find_device_code(nvcc_builds.path("lineinfo")).registered()
              if "k_externc" in f.kernel_names())
    ptx = next(e for e in fb.entries if e.is_ptx)
    assert "--generate-line-info" in ptx.options and ptx.name.endswith("params.cu")


def test_whole_program_build_has_an_unregistered_device_link_wrapper(nvcc_builds):
    code = find_device_code(nvcc_builds.path("default"))
    versions = sorted((f.wrapper.version, f.registered) for f in code.fatbins)
    # the v2 device-link image is never registered; one v1 wrapper per TU (params.cu, main.cu) is
    assert versions == [(1, True), (1, True), (2, False)]
    assert code.file_kind == "executable"


def test_rdc_build_registers_one_v2_wrapper_whose_prelinked_tus_hold_ptx(nvcc_builds):
    code = find_device_code(nvcc_builds.path("rdc"))
    registered = code.registered()
    assert [f.wrapper.version for f in registered] == [2]
    fb = registered[0]
    assert len(fb.prelinked) == 4                   # params.cu, main.cu, rdc_a.cu, rdc_b.cu
    assert all(p.section == "__nv_relfatbin" for p in fb.prelinked)
    assert not any(e.is_ptx for e in fb.entries)    # the linked image is a cubin only
    sources = fb.ptx_sources()
    assert any(".entry _Z10rdc_kernelPii" in s for s in sources)
    assert any(".func" in s and "_Z6helperi" in s for s in sources)
    # the kernel no host code launches is only in its TU's prelinked cubin
    layout = fb.kernel("_Z12rdc_kernel_bfPd")
    assert layout.offsets_and_sizes == expected_layout(["float", "ptr"])[0]
    # the __device__ function has .nv.info records but is not a kernel
    assert any(e.is_elf and "_Z6helperi" in e.cubin.device_functions
               and "_Z6helperi" not in e.cubin.kernel_names for p in fb.prelinked for e in p.entries)


def test_object_file_wrapper_is_resolved_through_its_relocation(nvcc_builds):
    code = find_device_code(nvcc_builds.path("object"))
    assert code.file_kind == "relocatable"
    assert len(code.wrappers) == 1 and code.fatbins[0].wrapper is code.wrappers[0]
    assert set(code.fatbins[0].kernel_names()) == set(PARAMS_KERNELS)


def test_cudart_shared_and_library_builds_are_found(nvcc_builds):
    assert find_device_code(nvcc_builds.path("cudart_shared")).file_kind == "executable"
    lib = find_device_code(nvcc_builds.path("lib"))
    assert lib.file_kind == "shared-object"
    assert set(PARAMS_KERNELS) <= set(lib.kernel_names())


def test_lto_ir_is_recognised_and_not_decoded(nvcc_builds):
    from cricket.fatbin import EntryKind, FatbinError
    code = find_device_code(nvcc_builds.path("lto"))
    (fb,) = code.fatbins
    (entry,) = fb.entries
    assert entry.kind == EntryKind.LTOIR and entry.arch_name == "lto_75"
    assert entry.flags & EntryFlag.LTOIR_OBFUSCATED
    with pytest.raises(FatbinError, match="LTO-IR .* not decoded"):
        entry.payload
    assert fb.kernel_names() == []
    assert "-ftz=0" in entry.options


REQNTID_PTX = """
.version 9.0
.target sm_90
.address_size 64

.visible .entry k_req(
\t.param .u64 k_req_param_0,
\t.param .u32 k_req_param_1
)
.reqntid 64, 2, 1
{
\tret;
}
"""


def test_reqntid_is_read_from_cubin_and_ptx(tmp_path):
    import shutil
    import subprocess
    from cricket.fatbin import Cubin, PtxModule
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    src = tmp_path / "req.ptx"
    src.write_text(REQNTID_PTX)
    subprocess.run([ptxas, "-arch=sm_90", "-o", str(tmp_path / "req.cubin"), str(src)], check=True)
    cubin = Cubin((tmp_path / "req.cubin").read_bytes())
    ptx = PtxModule(REQNTID_PTX)
    for layout in (cubin.kernel("k_req"), ptx.kernel("k_req")):
        assert layout.reqntid == (64, 2, 1)
        assert layout.offsets_and_sizes == [(0, 0, 8), (1, 8, 4)] and layout.param_size == 12


def test_wrapper_with_zeroed_pointer_is_resolved_through_rela_dyn(nvcc_builds, tmp_path):
    """ld writes the link-time address into the field and a RELATIVE relocation for it;
    when only the relocation is there, the container is still found."""
    from elftools.elf.elffile import ELFFile
    original = nvcc_builds.path("lib")
    data = bytearray(original.read_bytes())
    with open(original, "rb") as f:
        seg = ELFFile(f).get_section_by_name(".nvFatBinSegment")
        offset, count = seg["sh_offset"], seg["sh_size"] // 24
    for i in range(count):
        data[offset + 24 * i + 8:offset + 24 * i + 16] = bytes(8)
    copy = tmp_path / "zeroed.so"
    copy.write_bytes(bytes(data))
    before = find_device_code(original)
    after = find_device_code(copy)
    assert [f.wrapper.location.split(":")[1] for f in after.fatbins if f.wrapper] == \
           [f.wrapper.location.split(":")[1] for f in before.fatbins if f.wrapper]
    assert [f.digest for f in after.registered()] == [f.digest for f in before.registered()]

"""The shim's dynamic symbol table matches NVIDIA's libcudart.so.13, and its stubs are generated
from the CUDA headers' prototypes."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest


def defined_dynamic_symbols(lib: Path) -> set[tuple[str, str]]:
    """(type, name@version) of every defined dynamic symbol, as `nm -D` prints them."""
    out = subprocess.run(["nm", "-D", "--defined-only", str(lib)], check=True, capture_output=True,
                         text=True).stdout
    return {(fields[-2], fields[-1]) for fields in (line.split() for line in out.splitlines()) if fields}


def readelf(lib: Path, *flags: str) -> str:
    return subprocess.run(["readelf", *flags, str(lib)], check=True, capture_output=True, text=True).stdout


def test_exports_exactly_the_symbols_and_versions_of_the_real_libcudart(fresh_shim, real_libcudart):
    ours, theirs = defined_dynamic_symbols(fresh_shim), defined_dynamic_symbols(real_libcudart)
    assert ours - theirs == set(), "exported by the shim only"
    assert theirs - ours == set(), "exported by NVIDIA's libcudart only"
    assert ("A", "libcudart.so.13") in ours          # the version node itself
    functions = [name for kind, name in ours if kind == "T"]
    assert len(functions) == 422 and all(n.endswith("@@libcudart.so.13") for n in functions)


def test_checked_in_name_list_matches_the_real_library(build_module, real_libcudart):
    names = set(build_module.gen_stubs.read_export_names())
    real = {name.split("@")[0] for kind, name in defined_dynamic_symbols(real_libcudart) if kind == "T"}
    assert names == real


def test_soname_and_version_node_claim_libcudart_13(fresh_shim):
    dynamic = readelf(fresh_shim, "-d")
    assert "Library soname: [libcudart.so.13]" in dynamic
    versions = readelf(fresh_shim, "-V")
    assert re.search(r"Version definition section.*?Name: libcudart\.so\.13", versions, re.S)


def test_does_not_link_libpython_and_file_name_hides_libcudart(fresh_shim):
    needed = re.findall(r"Shared library: \[(.+?)\]", readelf(fresh_shim, "-d"))
    assert needed and not any("python" in n for n in needed), needed
    assert "libcudart.so" not in fresh_shim.name


def test_stubs_use_the_header_prototypes(fresh_shim):
    stubs = (fresh_shim.parent / "gen" / "stubs.c").read_text()
    # Per-thread default stream variants take the prototype of the function they rename.
    assert ("CRICKET_EXPORT cudaError_t cudaMemDiscardBatchAsync_ptsz(void **dptrs, size_t *sizes, size_t count, "
            "unsigned long long flags, cudaStream_t stream)") in stubs
    # Implemented functions (forward.c, forward_runtime.c) are not stubs.
    for name in ("cudaGetErrorString", "__cudaRegisterFatBinary", "cudaMemcpyAsync_ptsz",
                 "__cudaPushCallConfiguration", "cudaLaunchKernel", "cudaCreateChannelDesc"):
        assert f" {name}(" not in stubs


def test_every_export_has_a_header_prototype_except_three_private_ones(build_module):
    include = Path("/usr/local/cuda/include")
    if not (include / "cuda_runtime_api.h").exists():
        pytest.skip("CUDA headers not installed")
    gen = build_module.gen_stubs
    protos = gen.find_prototypes(gen.read_export_names(), include)
    assert sorted(n for n, p in protos.items() if not p.header) == [
        "__cudaGetProcAddress", "__cudaRegisterHostVar", "__cudaRegisterUnifiedTable"]
    assert protos["__cudaRegisterFunction"].params.startswith("void **fatCubinHandle, const char *hostFun")


def test_missing_headers_give_a_clear_error(build_module, tmp_path):
    with pytest.raises(build_module.gen_stubs.GenerationError, match="--cuda-include"):
        build_module.gen_stubs.generate(tmp_path / "out", tmp_path)


def test_build_script_skips_cleanly_when_optional_and_cuda_is_missing(build_module, tmp_path, capsys):
    assert build_module.main([str(tmp_path), "--cuda-include", str(tmp_path), "--optional"]) == 0
    assert "skipped" in capsys.readouterr().err
    assert build_module.main([str(tmp_path), "--cuda-include", str(tmp_path)]) == 1

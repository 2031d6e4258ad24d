"""Every example program prints PASS through `cricket run` on the emu backend: built by nvcc with
-cudart shared, run unmodified with the libcudart shim preloaded, against a real server process."""
from __future__ import annotations

import sys

import pytest

from client_runtime_support import ROOT, cricket_run

SELF_CHECKING = ["vector_add", "device_info", "matmul_tiled", "reduction", "streams_events", "symbols",
                 "struct_by_value", "templates", "printf_kernel", "launch_kernel", "memory", "error_paths",
                 "dlopen_host", "two_tu", "rdc", "threads", "fork_child", "driver_contexts", "jit_link",
                 "mapped_memory", "device_query", "warp_reduce", "shared_memory_config", "wmma_gemm",
                 "mma_ldmatrix", "recursion", "function_pointers", "device_malloc",
                 "texture_2d", "surface_rw", "texture_layered_3d", "texture_driver", "tma_tile",
                 "dynamic_parallelism", "cooperative_groups", "libraries", "rdc_static", "runtime_primary_context"]


@pytest.mark.nvcc
@pytest.mark.parametrize("name", SELF_CHECKING)
def test_example_passes_through_cricket_run(name, examples, server):
    res = cricket_run([str(examples[name])], server=server.address)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS" in res.stdout and "FAIL" not in res.stdout


@pytest.mark.nvcc
@pytest.mark.parametrize("name", ["vector_add", "symbols", "dlopen_host", "rdc", "threads", "fork_child"])
def test_example_passes_with_immediate_binding(name, examples, server):
    # LD_BIND_NOW resolves every libcudart import at load time: each must be exported by the shim.
    res = cricket_run([str(examples[name])], server=server.address, env={"LD_BIND_NOW": "1"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS" in res.stdout


@pytest.mark.nvcc
def test_kernel_printf_reaches_the_program_output_not_the_server(examples, server):
    res = cricket_run([str(examples["printf_kernel"])], server=server.address)
    assert res.returncode == 0, res.stdout + res.stderr
    for block in (0, 1):
        for thread in (0, 1):
            line = f"hello from thread {thread} of block {block}, value {40 + thread}"
            assert line in res.stdout
            assert line not in server.output()


@pytest.mark.nvcc
def test_python_host_reaches_the_shim_through_ctypes(examples, server):
    res = cricket_run([sys.executable, str(ROOT / "examples" / "python_host.py"),
                       str(examples["kernel_lib"].parent)], server=server.address)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS: Python host through ctypes (1 device(s), 4 threads)" in res.stdout


@pytest.mark.nvcc
def test_error_paths_report_the_cuda_errors(examples, server):
    res = cricket_run([str(examples["error_paths"])], server=server.address)
    assert "out-of-bounds kernel reported as cudaErrorIllegalAddress" in res.stdout, res.stdout + res.stderr
    assert res.returncode == 0


@pytest.mark.nvcc
@pytest.mark.parametrize("name", ["vector_add", "struct_by_value", "streams_events"])
def test_example_passes_with_the_pure_python_twins(name, examples, server):
    # CRICKET_PUREPYTHON=1: hostmem (argument packing, out-parameters, copies) runs through ctypes
    res = cricket_run([str(examples[name])], server=server.address, env={"CRICKET_PUREPYTHON": "1"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS" in res.stdout

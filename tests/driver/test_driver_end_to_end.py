"""Programs run through the cricket libcuda.so.1 against a real `cricket server` (emu backend, a
separate process on a Unix socket): NVIDIA's static cudart as nvcc links it by default, and
cuda-python's driver bindings loading PTX, fatbin and cubin images. The library is put in front
with LD_LIBRARY_PATH and reaches the client through CRICKET_LIBPYTHON (native programs) or the
running interpreter (Python programs); the server never sees the library.

The emu backend executes PTX; a bare cubin (SASS only) loads but cannot run there, which is what
the cubin test checks (on a GPU server it runs)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from cricket.client.local_server import LocalServer
from cricket.client.run_cli import libpython

from .driver_support import PROGRAMS, ROOT, environment, examples_build


@pytest.fixture(scope="module")
def compile_example(run_lock):
    """``compile_example(name)``: the example built as examples/build.py builds it, but with nvcc's
    default (static) cudart, into build/examples-static (shared with test_examples_static.py)."""
    def get(name: str) -> Path:
        with run_lock("examples"):
            return examples_build.build([name], ROOT / "build" / "examples-static", cudart="static")[name]
    return get


def run_native(exe: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=180)


# ------------------------------------------------------------------ static cudart (nvcc's default)

@pytest.mark.nvcc
def test_vector_add_with_static_cudart_passes_through_the_server(driver_dir, server, compile_example):
    if not libpython():
        pytest.skip("this Python has no shared libpython for a native program to embed")
    exe = compile_example("vector_add")
    assert "cudaRegisterFatBinary" not in subprocess.run(["nm", "-D", str(exe)], capture_output=True,
                                                         text=True).stdout   # static: no libcudart.so
    proc = run_native(exe, environment(driver_dir, server, CRICKET_STATS="1", CRICKET_LOG="INFO"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout
    # the work reached the server: its device answered, the kernel and the copies went there
    assert "device(s) from the server at" in proc.stderr
    stats = re.search(r"\[cricket\] (\d+) kernel launch\(es\), (\d+) B to and (\d+) B from", proc.stderr)
    assert stats and stats.groups() == ("1", "80000", "40000"), proc.stderr


@pytest.mark.nvcc
def test_native_program_without_a_server_fails_at_the_first_forwarded_call(driver_dir, server, compile_example):
    exe = compile_example("vector_add")
    env = environment(driver_dir, server, CRICKET_SERVER="/nonexistent/cricket.sock")
    proc = run_native(exe, env)
    assert "PASS" not in proc.stdout
    assert "/nonexistent/cricket.sock" in proc.stderr


# ------------------------------------------------------------------ cuda-python driver API

@pytest.fixture(scope="module")
def images(nvcc_build) -> dict[str, Path]:
    built = {kind: nvcc_build(f"-{kind}", "-arch=sm_75", PROGRAMS / "vadd_kernel.cu", output=f"vadd.{kind}")
             for kind in ("ptx", "cubin", "fatbin")}
    # SASS only, as cuBLAS ships most kernels
    built["sass-fatbin"] = nvcc_build("-fatbin", "-gencode", "arch=compute_75,code=sm_75",
                                      PROGRAMS / "vadd_kernel.cu", output="vadd-sass.fatbin")
    return built


def run_cuda_python(driver_dir, server, image: Path, mode: str) -> subprocess.CompletedProcess:
    pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (pip install cuda-python)")
    return subprocess.run([sys.executable, str(PROGRAMS / "cuda_python_vadd.py"), str(image), mode],
                          capture_output=True, text=True, env=environment(driver_dir, server), timeout=120)


@pytest.mark.nvcc
@pytest.mark.parametrize("kind", ["ptx", "fatbin"])
@pytest.mark.parametrize("mode", ["params", "extra"])
def test_cuda_python_vector_add_passes(driver_dir, server, images, kind, mode):
    proc = run_cuda_python(driver_dir, server, images[kind], mode)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "device cricket emu (emulated sm_75 on the CPU)"   # the server's HELLO snapshot
    assert lines[1] == "memory type 2"                                     # CU_MEMORYTYPE_DEVICE
    assert lines[-1] == "PASS: driver-API vector add of 5000 elements, 0 wrong"


@pytest.mark.nvcc
@pytest.mark.parametrize("kind", ["cubin", "sass-fatbin"])
def test_sass_only_module_loads_and_its_launch_reports_no_binary(driver_dir, server, images, kind):
    proc = run_cuda_python(driver_dir, server, images[kind], "params")
    # loading, cuModuleGetFunction (layout from the cubin's .nv.info), allocation and copies work;
    # the emu backend has no SASS engine, so the launch itself (not a later synchronisation)
    # reports CUDA_ERROR_NO_BINARY_FOR_GPU, and the log says which kernel and why
    assert proc.stdout.splitlines()[1] == "memory type 2"
    assert proc.stdout.splitlines()[-1] == "FAIL: cuLaunchKernel: CUDA_ERROR_NO_BINARY_FOR_GPU"
    report = [line for line in proc.stderr.splitlines() if "CUDA_ERROR_NO_BINARY_FOR_GPU" in line]
    assert len(report) == 1, proc.stderr
    assert "kernel vadd: the module image ships no PTX for this kernel (only SASS for sm_75)" in report[0]
    assert "GPU server" in report[0]


# ------------------------------------------------------------------ cuda.core with NVRTC, CuPy

def test_cuda_core_compiles_with_nvrtc_and_launches(driver_dir, server):
    pytest.importorskip("cuda.core", reason="cuda.core not installed (pip install cuda-core)")
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib
        load_nvidia_dynamic_lib("nvrtc")
    except Exception as exc:
        pytest.skip(f"NVRTC not found ({exc}); pip install nvidia-cuda-nvrtc")
    proc = subprocess.run([sys.executable, str(PROGRAMS / "cuda_core_nvrtc.py")], capture_output=True,
                          text=True, env=environment(driver_dir, server), timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "PASS: cuda.core NVRTC kernel on 1000 elements, 0 wrong"
    assert "failed" not in proc.stderr          # the pool's free at exit succeeds too


def test_cupy_elementwise_and_reduction_kernels(driver_dir, server):
    """CuPy with its defaults: CUB on (CUPY_ACCELERATORS unset), so reductions and scans run CUB's
    kernels (min/max.s16x2, griddepcontrol, long mangled names, a tuning policy picked by the PTX
    version, a 21 MB PTX module); results against NumPy on the same data."""
    pytest.importorskip("cupy", reason="cupy-cuda13x not installed")
    env = environment(driver_dir, server, CUPY_COMPILE_WITH_PTX="1")
    env.pop("CUPY_ACCELERATORS", None)
    proc = subprocess.run([sys.executable, str(PROGRAMS / "cupy_kernels.py")], capture_output=True,
                          text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    got = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert {k: got.pop(k) for k in ("accelerators", "elementwise", "kernel", "reduction_kernel", "sum", "max")} == {
        "accelerators": "[1] [1]", "elementwise": "True", "kernel": "True", "reduction_kernel": "True", "sum": "1000000.0 1000000.0",
        "max": "999.0 999.0"}
    assert len(got) == 9 * 2 * 3                   # 9 reductions/scans/sorts x 2 dtypes x 3 sizes
    assert [k for k, v in got.items() if v != "True"] == []


# ------------------------------------------------------------------ one process, one client state

@pytest.mark.nvcc
def test_runtime_shim_and_driver_share_one_client_state(driver_dir, server, tmp_path):
    shim = ROOT / "cricket" / "_preload" / "libcricket-cudart.so"
    if not shim.exists():
        pytest.skip(f"the libcudart shim is not built ({shim}); run make build")
    if not libpython():
        pytest.skip("this Python has no shared libpython for a native program to embed")
    exe = tmp_path / "both_layers"
    subprocess.run(["nvcc", "-cudart", "shared", "-o", str(exe), str(PROGRAMS / "both_layers.cu"),
                    f"-L{driver_dir}", "-l:libcuda.so.1"], check=True)
    proc = run_native(exe, environment(driver_dir, server, LD_PRELOAD=str(shim), CRICKET_STATS="1"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == ["memory type 2", "PASS: both layers on one client state, 0 wrong"]
    # one connection: one summary line, counting the copies of both layers
    summaries = re.findall(r"\[cricket\] (\d+) kernel launch\(es\), (\d+) B to and (\d+) B from", proc.stderr)
    assert summaries == [("1", "16384", "32768")], proc.stderr


# ------------------------------------------------------------------ addresses

def test_device_addresses_are_reserved_and_classified(driver_dir, server):
    import json
    proc = subprocess.run([sys.executable, str(PROGRAMS / "address_probe.py"), str(driver_dir / "libcricket-cuda.so")],
                          capture_output=True, text=True, env=environment(driver_dir, server), timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got["init"] == got["alloc"] == got["host_alloc"] == 0
    assert got["reserved"], "the device allocation's addresses are not reserved in the process"
    assert got["type_device"] == [0, 2]              # CU_MEMORYTYPE_DEVICE
    assert got["type_host_pinned"] == [0, 1]         # CU_MEMORYTYPE_HOST
    assert got["type_pageable"][0] == 1              # unknown memory: CUDA_ERROR_INVALID_VALUE
    assert got["range"] == [0, True, 1 << 20]
    assert got["free"] == [0, 1]                     # a second free is an error
    assert got["free_host"] == 0


def test_pure_python_twins_carry_the_driver_path(driver_dir, server, images):
    """CRICKET_PUREPYTHON=1: the client's memory access goes through the ctypes twin of hostmem."""
    pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (pip install cuda-python)")
    env = environment(driver_dir, server, CRICKET_PUREPYTHON="1")
    proc = subprocess.run([sys.executable, str(PROGRAMS / "cuda_python_vadd.py"), str(images["ptx"]), "params"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "PASS: driver-API vector add of 5000 elements, 0 wrong"


# ------------------------------------------------------------------ a server that goes away

@pytest.mark.nvcc
def test_static_program_stops_with_an_error_when_the_server_dies(driver_dir, compile_example):
    if not libpython():
        pytest.skip("this Python has no shared libpython for a native program to embed")
    import time
    exe = compile_example("long_running")
    own = LocalServer(["emu"])
    try:
        proc = subprocess.Popen([str(exe)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=environment(driver_dir, own))
        assert proc.stdout.readline() == "running\n"
    finally:
        own.stop()
    started = time.monotonic()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, out + err
    assert out.startswith("stopped: cudaError"), out
    assert time.monotonic() - started < 30

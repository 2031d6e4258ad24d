"""NVIDIA's own cudart (static, as nvcc links it by default, and shared) initialises against the
cricket libcuda.so.1: the export tables, the integrity check and the device snapshot are
exercised for real. Programs are compiled by nvcc at test time and find the library through
LD_LIBRARY_PATH, as `cricket run` will arrange."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.nvcc

CUDA_DIR = Path(__file__).resolve().parent / "cuda"
CUDA_LIB = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "lib64"


def pip_cudart_dir() -> Path | None:
    """The lib folder of the pip `nvidia-cuda-runtime` wheel (cudart 13.5+), if installed."""
    try:
        import nvidia.cu13
    except ImportError:
        return None
    for base in nvidia.cu13.__path__:
        if (Path(base) / "lib" / "libcudart.so.13").exists():
            return Path(base) / "lib"
    return None


@pytest.fixture(scope="module")
def programs(tmp_path_factory, driver_dir) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("cuda-programs")
    built = {}
    for name, flags in (("static", []), ("shared", ["-cudart", "shared"])):
        built[name] = out / f"runtime_info_{name}"
        subprocess.run(["nvcc", *flags, "-o", str(built[name]), str(CUDA_DIR / "runtime_info.cu")], check=True)
    built["threads"] = out / "threads_reset"
    subprocess.run(["nvcc", "-o", str(built["threads"]), str(CUDA_DIR / "threads_reset.cu")], check=True)
    built["driver"] = out / "driver_info"
    subprocess.run(["nvcc", "-o", str(built["driver"]), str(CUDA_DIR / "driver_info.cu"),
                    f"-L{driver_dir}", "-l:libcuda.so.1"], check=True)
    return built


def run(program: Path, driver_dir: Path, cudart_dir: Path = CUDA_LIB, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("CRICKET_DRIVER_")}
    full.update(LD_LIBRARY_PATH=f"{driver_dir}:{cudart_dir}", LD_BIND_NOW="1", **env)
    return subprocess.run([str(program)], capture_output=True, text=True, env=full, timeout=60)


def lines(proc: subprocess.CompletedProcess) -> dict[str, str]:
    """'key value' lines; 'device N field value' lines become 'deviceN.field'."""
    out = {}
    for line in proc.stdout.splitlines():
        if line.startswith("device "):
            _, ordinal, field, value = line.split(" ", 3)
            out[f"device{ordinal}.{field}"] = value
        else:
            key, _, value = line.partition(" ")
            out[key] = value
    return out


@pytest.mark.parametrize("cudart", ["static", "shared"])
def test_cudart_initialises_against_the_export_tables(programs, driver_dir, cudart):
    proc = run(programs[cudart], driver_dir, CRICKET_LOG="DEBUG")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = lines(proc)
    assert got["cudaGetDeviceCount"] == "0 cudaSuccess"
    assert got["device_count"] == "1"
    assert got["runtime_version"] == "13000"
    assert got["driver_version"] == "13000"
    assert got["device0.name"] == "cricket emulated sm_75"
    assert got["device0.cc"] == "7.5"
    assert got["device0.sms"] == "40"
    assert got["device0.mem"] == str(15 << 30)
    assert bytes.fromhex(got["device0.uuid"]) == b"cricket-emu-sm75"
    assert got["cudaSetDevice"] == "0 cudaSuccess"
    assert got["cudaDeviceGetStreamPriorityRange"] == "0 cudaSuccess"
    assert got["stream_priorities"] == "0 -5"
    # cudart's lazy context creation went through the tables: primary context, then its CLS entry
    log = proc.stderr
    assert log.count("integrity check version") == 3
    assert "primary context of device 0 retained" in log
    assert log.index("primary context of device 0 retained") < log.index("context-local storage put")
    assert got["current_device"] == "0"
    # memory is forwarded to the server: a native program without CRICKET_LIBPYTHON cannot start
    # the client, and says how to run it instead
    assert got["cudaMalloc"] == "3 cudaErrorInitializationError"
    assert "CRICKET_LIBPYTHON is not set" in proc.stderr


def test_pip_cudart_13_5_gets_its_new_table_and_slot(programs, driver_dir):
    cudart_dir = pip_cudart_dir()
    if cudart_dir is None:
        pytest.skip("pip package nvidia-cuda-runtime>=13.5 not installed")
    proc = run(programs["shared"], driver_dir, cudart_dir, CRICKET_LOG="DEBUG")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = lines(proc)
    assert int(got["runtime_version"]) >= 13050
    assert got["device0.name"] == "cricket emulated sm_75"
    assert got["cudaDeviceGetStreamPriorityRange"] == "0 cudaSuccess"
    assert "cuGetExportTable 21318c60" in proc.stderr        # refusing it crashes cudart 13.5
    assert "CUDART_INTERFACE[12]" in proc.stderr
    version = int(got["runtime_version"])
    for call in range(3):
        assert f"integrity check version {version + call}" in proc.stderr


def test_corrupted_integrity_hash_fails_cudart_with_103(programs, driver_dir):
    proc = run(programs["static"], driver_dir, CRICKET_DRIVER_CORRUPT_INTEGRITY="1")
    assert proc.returncode == 1
    assert lines(proc)["cudaGetDeviceCount"] == "103 cudaErrorSoftwareValidityNotEstablished"
    assert "CRICKET_DRIVER_CORRUPT_INTEGRITY is set" in proc.stderr


def test_cudart_reports_the_devices_of_the_snapshot_file(programs, driver_dir, tmp_path):
    spec = tmp_path / "devices.txt"
    spec.write_text("driver_version 13020\n"
                    "device\nname Snapshot GPU A\nuuid 000102030405060708090a0b0c0d0e0f\nattr 75 8\nattr 76 6\n"
                    "attr 33 23\n"
                    "device\nname Snapshot GPU B\nuuid f0e1d2c3b4a5968778695a4b3c2d1e0f\nattr 50 1\nattr 33 202\n"
                    "total_mem 1073741824\n")
    proc = run(programs["static"], driver_dir, CRICKET_DRIVER_DEVICES=str(spec))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = lines(proc)
    assert got["device_count"] == "2"                  # both devices' ids go into the integrity hash
    assert got["driver_version"] == "13020"
    assert (got["device0.name"], got["device0.cc"], got["device0.pci"]) == ("Snapshot GPU A", "8.6", "0:23:0")
    assert (got["device1.name"], got["device1.mem"], got["device1.pci"]) == ("Snapshot GPU B", "1073741824", "1:202:0")
    assert got["device1.uuid"] == "f0e1d2c3b4a5968778695a4b3c2d1e0f"


def test_driver_api_program_linked_with_lcuda(programs, driver_dir):
    proc = run(programs["driver"], driver_dir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "version 13000 count 1 name cricket emulated sm_75 current_is_primary 1 ctx_device 0" in proc.stdout


def test_threads_share_one_primary_context_and_reset_releases_it(programs, driver_dir):
    proc = run(programs["threads"], driver_dir, CRICKET_LOG="DEBUG")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = lines(proc)
    assert got == {"thread_failures": "0", "reset": "0", "after_reset": "0"}
    log = proc.stderr
    # one retain by CUDART_INTERFACE[2] at init, one when the context is first made current
    assert "retained (count 2)" in log and "retained (count 3)" not in log
    assert "released (count 1)" in log       # cudaDeviceReset gives back the second one


def test_three_static_cudart_copies_share_one_driver_state(tmp_path, driver_dir):
    for part in ("part_a", "part_b"):
        subprocess.run(["nvcc", "-shared", "-Xcompiler", "-fPIC", f"-DPART_NAME={part}", "-o",
                        str(tmp_path / f"lib{part}.so"), str(CUDA_DIR / "static_part.cu")], check=True)
    main = tmp_path / "main"
    subprocess.run(["nvcc", "-o", str(main), str(CUDA_DIR / "static_parts_main.cu"), f"-L{tmp_path}",
                    "-lpart_a", "-lpart_b"], check=True)
    proc = run(main, driver_dir, f"{CUDA_LIB}:{tmp_path}", CRICKET_LOG="DEBUG")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == ["part_a 0 1 -5", "part_b 0 1 -5", "main 0"]
    log = proc.stderr
    assert log.count("integrity check version 13002") == 3          # each copy checks the driver
    puts = [line for line in log.splitlines() if "context-local storage put" in line]
    contexts = {re.search(r"\(context (0x[0-9a-f]+),", line).group(1) for line in puts}
    assert len(puts) == 3 and len(contexts) == 1                    # three keys, one primary context
    assert "retained (count 6)" in log and "released (count 3)" in log


def test_ld_preload_of_the_library_file_is_found_by_soname(programs, driver_dir):
    # cudart dlopens "libcuda.so.1"; a preloaded object with that SONAME answers it, whatever its file name
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRICKET_DRIVER_")}
    env.update(LD_PRELOAD=str(driver_dir / "libcricket-cuda.so"))
    env.pop("LD_LIBRARY_PATH", None)
    proc = subprocess.run([str(programs["static"])], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert lines(proc)["device0.name"] == "cricket emulated sm_75"

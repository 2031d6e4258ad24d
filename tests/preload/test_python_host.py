"""A Python program that loads libcudart through ctypes reaches the shim, which uses the running
interpreter; libraries with kernels register with the Python side; exit is clean."""
from __future__ import annotations

import sys
import textwrap

import pytest

pytestmark = pytest.mark.nvcc

PRELUDE = textwrap.dedent("""
    import ctypes, os, sys, threading
    rt = ctypes.CDLL("libcudart.so.13")
    rt.cudaGetErrorString.restype = rt.cudaGetErrorName.restype = ctypes.c_char_p
    def version():
        v = ctypes.c_int(-1)
        return rt.cudaRuntimeGetVersion(ctypes.byref(v)), v.value
""")


def run_python(run, env, body: str, *args):
    return run([sys.executable, "-c", PRELUDE + textwrap.dedent(body), *args], env)


def test_ctypes_dlopen_by_soname_reaches_the_shim(shim_env, run):
    result = run_python(run, shim_env, """
        print("malloc", rt.cudaDestroyExternalMemory(None))
        print("string", rt.cudaGetErrorString(801).decode())
        print("version", *version())
        from cricket._cext import cudart_api
        print("attached", cudart_api.attached())
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["malloc 801", "string operation not supported",
                                          "version 0 13000", "attached True"]


def test_shim_loaded_by_path_answers_from_python(fresh_shim, shim_env, run):
    env = {k: v for k, v in shim_env.items() if k != "LD_PRELOAD"}
    code = textwrap.dedent("""
        import ctypes, sys
        shim = ctypes.CDLL(sys.argv[1])
        shim.cudaGetErrorName.restype = ctypes.c_char_p
        again = ctypes.CDLL("libcudart.so.13")          # matched by SONAME: the same library
        print(shim._handle == again._handle, shim.cudaGetErrorName(801).decode())
        print(again.cudaDestroyExternalMemory(None))
    """)
    result = run([sys.executable, "-c", code, fresh_shim], env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["True cudaErrorNotSupported", "801"]


def test_kernel_library_registers_its_fatbin_functions_and_variables(programs, shim_env, run):
    result = run_python(run, shim_env, """
        lib = ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW)
        print("lib version", lib.kernels_runtime_version())
        from cricket.client import runtime_api
        (fatbin,) = runtime_api.REGISTRATIONS.fatbins()
        print("ended", fatbin.ended, "magic", hex(fatbin.wrapper_magic))
        print("image", type(fatbin.image).__name__, bytes(fatbin.image[:4]).hex(), len(fatbin.image))
        print("functions", sorted(f.device_name.decode() for f in fatbin.functions))
        print("variables", sorted((v.device_name.decode(), v.size, v.constant) for v in fatbin.variables))
        print("init", runtime_api.init_module(fatbin.handle))
    """, programs.get("kernels.cu", shared=True))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "lib version 13000"
    assert lines[1] == "ended True magic 0x466243b1"
    # the container where the library maps it, not a copy; magic 0xBA55ED50
    assert lines[2].startswith("image memoryview 50ed55ba ")
    assert lines[3] == "functions ['_Z4fillIiEvPT_S0_i', '_Z5saxpyfPKfPfi']"
    assert lines[4] == "variables [('constant_lut', 64, True), ('device_scale', 4, False)]"
    assert lines[5] == "init True"


def test_managed_variable_is_registered_for_placement(programs, shim_env, run):
    # placed at __cudaInitModule (cricket.client.managed; run with a server in
    # examples/managed_memory.cu); without a server the placement fails and says which variable
    result = run_python(run, shim_env, """
        lib = ctypes.CDLL(sys.argv[1])
        from cricket.client import runtime_api
        (fatbin,) = runtime_api.REGISTRATIONS.fatbins()
        print(fatbin.refused, [(v.device_name.decode(), v.managed) for v in fatbin.variables])
        print(runtime_api.init_module(fatbin.handle))
    """, programs.get("managed.cu", shared=True))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["[] [('managed_counter', True)]", "False"]
    assert "cannot place the __managed__ variables of fatbin" in result.stderr


def test_replacing_an_implementation_takes_effect_without_touching_c(shim_env, run):
    result = run_python(run, shim_env, """
        print(*version())
        from cricket.client import runtime_api
        runtime_api.register("cudaRuntimeGetVersion", lambda: (0, 12080), replace=True)
        print(*version())
        runtime_api.register("cudaRuntimeGetVersion", lambda: 1 // 0, replace=True)
        print(*version())
        del runtime_api.IMPLEMENTATIONS["cudaRuntimeGetVersion"]
        print(*version())
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["0 13000", "0 12080", "999 -1", "801 -1"]
    assert "ZeroDivisionError" in result.stderr                 # logged, not swallowed


def test_python_threads_call_through_ctypes_at_once(shim_env, run):
    result = run_python(run, shim_env, """
        results = []
        def worker():
            results.append(all(version() == (0, 13000) and rt.cudaGetErrorName(2) == b"cudaErrorMemoryAllocation"
                               for _ in range(300)))
        threads = [threading.Thread(target=worker) for _ in range(6)]
        for t in threads: t.start()
        for t in threads: t.join()
        print(results)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str([True] * 6)


def test_exit_after_python_finalised_does_not_touch_python(programs, shim_env, run):
    # nvcc's __cudaUnregisterFatBinary runs from libc's atexit, after Py_FinalizeEx: it must
    # return without calling into the dead interpreter (rc 139 before the guard existed).
    result = run_python(run, dict(shim_env, CRICKET_LOG="DEBUG"), """
        lib = ctypes.CDLL(sys.argv[1])
        print(lib.kernels_runtime_version())
    """, programs.get("kernels.cu", shared=True))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "13000"
    assert "__cudaUnregisterFatBinary after the client finished: ignored" in result.stderr


def test_exit_from_c_while_python_runs_unregisters_through_python(programs, shim_env, run):
    # The other order: libc's exit() runs nvcc's unregister hook while the interpreter is alive.
    result = run_python(run, shim_env, """
        import logging
        logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format="%(message)s")
        lib = ctypes.CDLL(sys.argv[1])
        print(lib.kernels_runtime_version(), flush=True)
        ctypes.CDLL(None).exit(0)
    """, programs.get("kernels.cu", shared=True))
    assert result.returncode == 0, result.stderr
    assert "13000" in result.stdout.splitlines()
    assert any(line.startswith("unregistered fatbin") for line in result.stdout.splitlines()), result.stdout


def test_os_fork_while_another_thread_calls_cuda(shim_env, run):
    result = run_python(run, shim_env, """
        import os
        # The client starts before the fork: a fork while another thread is inside the client's
        # first import would leave CPython's import lock held in the child (a CPython limitation).
        assert version() == (0, 13000)
        stop = False
        def loop():
            while not stop:
                version()
        looper = threading.Thread(target=loop)
        looper.start()
        statuses = []
        for _ in range(10):
            pid = os.fork()
            if pid == 0:
                os._exit(0 if version() == (0, 13000) and rt.cudaGetErrorName(1) == b"cudaErrorInvalidValue" else 1)
            statuses.append(os.waitpid(pid, 0)[1])
        stop = True
        looper.join()
        print(statuses)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str([0] * 10)


DEBIAN_PYTHON = "/usr/bin/python3.11"


def test_python_with_static_libpython_uses_its_own_interpreter(shim_env, run):
    # Debian's python3.11 links libpython statically: the shim must find the API in the executable
    # and never map a second libpython.
    import os
    import subprocess
    if not os.path.exists(DEBIAN_PYTHON) or sys.version_info[:2] != (3, 11):
        pytest.skip(f"needs {DEBIAN_PYTHON} and a 3.11 build of the client module")
    if "libpython" in subprocess.run(["ldd", DEBIAN_PYTHON], capture_output=True, text=True).stdout:
        pytest.skip(f"{DEBIAN_PYTHON} links a shared libpython")
    env = dict(shim_env, PYTHONPATH=shim_env["CRICKET_PYTHONPATH"])
    code = PRELUDE + textwrap.dedent("""
        print(rt.cudaGetErrorString(801).decode(), *version())
        print(sorted({l.split()[-1] for l in open("/proc/self/maps") if "libpython" in l}))
    """)
    result = run([DEBIAN_PYTHON, "-c", code], env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["operation not supported 0 13000", "[]"]

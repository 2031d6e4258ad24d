"""A native program built with `nvcc -cudart shared` runs with the shim in front of libcudart: the
shim starts an embedded Python for the cricket client at the first call."""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess

import pytest

from cricket.cudafacts.cudart_errors import ERRORS

pytestmark = [pytest.mark.nvcc, pytest.mark.usefixtures("needs_libpython")]

NOT_SUPPORTED = 801


@pytest.fixture(scope="module")
def real_messages(real_libcudart):
    """What NVIDIA's own cudaGetErrorName/String answer (they need no GPU)."""
    lib = ctypes.CDLL(str(real_libcudart))
    lib.cudaGetErrorName.restype = lib.cudaGetErrorString.restype = ctypes.c_char_p
    return lambda code: (lib.cudaGetErrorName(code).decode(), lib.cudaGetErrorString(code).decode())


def parse_codes(stdout: str) -> dict[int, tuple[str, str]]:
    out = {}
    for line in stdout.splitlines():
        if line.startswith("code "):
            code, name, message = line[5:].split("|")
            out[int(code)] = (name, message)
    return out


def test_unimplemented_call_returns_801_and_strings_come_from_python(programs, shim_env, run, real_messages):
    codes = sorted(ERRORS) + [1000, 12345, -1]
    result = run([programs.get("shimtest.cu"), "errors", *codes], shim_env)
    assert result.returncode == 0, result.stderr
    assert f"cudaDestroyExternalMemory {NOT_SUPPORTED}" in result.stdout.splitlines()
    assert "cudaRuntimeGetVersion 0 13000" in result.stdout.splitlines()
    got = parse_codes(result.stdout)
    assert len(got) == len(codes)
    for code in codes:
        assert got[code] == real_messages(code), code
    assert "cudaDestroyExternalMemory is not implemented by cricket" in result.stderr


def test_without_the_shim_the_real_runtime_answers_differently(programs, shim_env, run):
    # Guards the test above: the program must really go through the shim to get 801.
    env = {k: v for k, v in shim_env.items() if k != "LD_PRELOAD"}
    result = run([programs.get("shimtest.cu"), "errors"], env)
    assert result.returncode == 0
    assert f"cudaDestroyExternalMemory {NOT_SUPPORTED}" not in result.stdout


def test_library_path_instead_of_preload(programs, shim_env, fresh_shim, run, tmp_path):
    (tmp_path / "libcudart.so.13").symlink_to(fresh_shim)
    env = {k: v for k, v in shim_env.items() if k != "LD_PRELOAD"}
    env["LD_LIBRARY_PATH"] = str(tmp_path)
    result = run([programs.get("shimtest.cu"), "errors", "801"], env)
    assert result.returncode == 0, result.stderr
    assert f"cudaDestroyExternalMemory {NOT_SUPPORTED}" in result.stdout
    assert f"code {NOT_SUPPORTED}|cudaErrorNotSupported|operation not supported" in result.stdout


def test_bind_now_resolves_every_import(programs, shim_env, run):
    env = dict(shim_env, LD_BIND_NOW="1")
    for program, args in (("shimtest.cu", ["errors", "2"]), ("nokernels.c", ["race", "2"])):
        result = run([programs.get(program), *args], env)
        assert result.returncode == 0, result.stderr
        assert "symbol lookup error" not in result.stderr


def test_registration_reaches_python_and_unregisters_before_python_exits(programs, shim_env, run):
    result = run([programs.get("shimtest.cu"), "errors"], dict(shim_env, CRICKET_LOG="DEBUG"))
    assert result.returncode == 0, result.stderr
    assert "client ready (embedded interpreter)" in result.stderr
    registered = [l for l in result.stderr.splitlines() if "registry: registered fatbin" in l]
    unregistered = [l for l in result.stderr.splitlines() if "registry: unregistered fatbin" in l]
    assert len(registered) == 1 and len(unregistered) == 1
    assert "(1 functions, 2 variables)" in unregistered[0]   # scale, device_counter, constant_table


def test_unimplemented_function_is_logged_once(programs, shim_env, run):
    result = run([programs.get("shimtest.cu"), "threads", "4", "50"], shim_env)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("cudaDestroyExternalMemory is not implemented by cricket") == 1


def test_kernel_launch_is_refused_not_faked(programs, shim_env, run):
    result = run([programs.get("shimtest.cu"), "launch"], shim_env)
    assert result.returncode == 0, result.stderr
    # shim_env names a server that does not exist: the launch fails, it is not faked.
    assert "launch last error 46" in result.stdout     # cudaErrorDevicesUnavailable
    assert "cannot reach the cricket server" in result.stderr


def test_several_native_threads_call_at_once(programs, shim_env, run):
    result = run([programs.get("shimtest.cu"), "threads", "8", "500"], shim_env)
    assert result.returncode == 0, result.stderr
    assert "threads 8 calls 4000 ok 4000" in result.stdout


def test_threads_racing_for_the_first_call_all_get_the_client(programs, shim_env, run):
    for _ in range(3):
        result = run([programs.get("nokernels.c"), "race", "16"], shim_env)
        assert result.returncode == 0, result.stderr
        assert "race threads 16 good 16" in result.stdout


def test_fork_while_another_thread_calls_cuda(programs, shim_env, run):
    result = run([programs.get("shimtest.cu"), "fork", "20"], shim_env, timeout=120)
    assert result.returncode == 0, result.stderr + result.stdout
    assert "fork children 20 good 20" in result.stdout


def test_call_after_python_finalised_gets_cudart_unloading(programs, shim_env, run):
    # The program's atexit handler is older than the shim's, so it runs after Python finalised.
    result = run([programs.get("nokernels.c"), "late-exit"], shim_env)
    assert result.returncode == 0, result.stderr
    assert "cudaRuntimeGetVersion 0 13000" in result.stdout
    assert "at exit cudaRuntimeGetVersion 4" in result.stdout        # cudaErrorCudartUnloading


def test_sigint_still_ends_the_program(programs, shim_env, tmp_path):
    # A .pth file that imports `signal` makes Python install its SIGINT handler during start-up;
    # the shim must restore the program's own disposition afterwards.
    (tmp_path / "imports_signal.pth").write_text("import signal\n")
    env = dict(shim_env, CRICKET_PYTHONPATH=os.pathsep.join([shim_env["CRICKET_PYTHONPATH"], str(tmp_path)]))
    proc = subprocess.Popen([str(programs.get("shimtest.cu")), "wait-signal"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready 13000"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == -signal.SIGINT
    finally:
        proc.kill()
        proc.communicate()


def test_without_libpython_the_client_is_unavailable_with_a_clear_message(programs, shim_env, run):
    env = {k: v for k, v in shim_env.items() if k != "CRICKET_LIBPYTHON"}
    result = run([programs.get("shimtest.cu"), "errors", "801"], env)
    assert result.returncode == 0, result.stderr
    assert "CRICKET_LIBPYTHON is not set" in result.stderr
    assert "cudaRuntimeGetVersion 3 -1" in result.stdout        # cudaErrorInitializationError
    assert f"cudaDestroyExternalMemory {NOT_SUPPORTED}" in result.stdout

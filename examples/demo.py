"""`make demo`: an unmodified CUDA program runs with its CUDA calls executed by a cricket server.

Builds examples/vector_add.cu with ``nvcc -cudart shared`` and runs it through
``cricket run --stats`` (a local server with the best backend available: cuda where a GPU is
visible, else the emu PTX interpreter), printing what ran where and how long it took.

Where nvcc (or the C compiler for the libcudart shim) is missing, it says so and runs the same
kernel from the PTX file the repository ships (examples/vector_add.ptx) through the Python client
API instead.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "build" / "examples"


def _examples_build():
    spec = importlib.util.spec_from_file_location("cricket_examples_build", ROOT / "examples" / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def shim_ready() -> tuple[bool, str]:
    from cricket.client.run_cli import SHIM
    if SHIM.exists():
        return True, ""
    res = subprocess.run([sys.executable, str(ROOT / "cext" / "preload" / "build.py"), str(SHIM.parent),
                          "--optional", "--gen-dir", str(ROOT / "build" / "preload")],
                         capture_output=True, text=True)
    return SHIM.exists(), (res.stderr or res.stdout).strip()


def run_native() -> int:
    print("demo: building examples/vector_add.cu with nvcc -cudart shared ...", flush=True)
    t0 = time.monotonic()
    program = _examples_build().build(["vector_add"], OUT, jobs=1)["vector_add"]
    print(f"demo: built {program.relative_to(ROOT)} in {time.monotonic() - t0:.1f} s; running it "
          f"through cricket:\n    cricket run --stats -- {program.relative_to(ROOT)}\n", flush=True)
    env = {k: v for k, v in os.environ.items() if k != "CRICKET_SERVER"}
    res = subprocess.run([sys.executable, "-m", "cricket", "run", "--stats", "--", str(program)],
                         cwd=ROOT, env=env)
    print(f"\ndemo: the program exited with status {res.returncode}")
    return res.returncode


def run_ptx(reason: str) -> int:
    import numpy as np

    from cricket.client.api import connect
    print(f"demo: {reason}; running the same kernel from examples/vector_add.ptx through the "
          "Python client API instead\n", flush=True)
    n = 10000
    a = np.arange(n, dtype=np.float32)
    b = 2 * a
    t0 = time.monotonic()
    with connect() as gpu:                      # an embedded server with the best backend here
        t1 = time.monotonic()
        print(f"server: {gpu.server}, backend {gpu.backend} ({'emulated' if gpu.emulated else 'GPU'}), "
              f"device {gpu.devices[0].name}; started and connected in {t1 - t0:.2f} s")
        vadd = gpu.load_module(ROOT / "examples" / "vector_add.ptx").get_function("_Z4vaddPKfS0_Pfi")   # vadd(const float*, const float*, float*, int)
        da, db, dc = gpu.to_device(a), gpu.to_device(b), gpu.alloc(4 * n)
        t2 = time.monotonic()
        vadd((n + 255) // 256, 256, da, db, dc, n)
        c = dc.to_host(np.float32)
        t3 = time.monotonic()
    ok = bool(np.array_equal(c, a + b))
    print(f"vadd over {n} elements: launch and copy back in {(t3 - t2) * 1e3:.1f} ms "
          f"(total {t3 - t0:.2f} s)")
    print(f"{'PASS' if ok else 'FAIL'}: vector add of {n} elements")
    return 0 if ok else 1


def main() -> int:
    if shutil.which("nvcc") is None:
        return run_ptx("nvcc (the CUDA 13 toolkit) is not installed, so no CUDA program can be built")
    ok, why = shim_ready()
    if not ok:
        return run_ptx(f"the libcudart shim could not be built ({why})")
    return run_native()


if __name__ == "__main__":
    sys.exit(main())

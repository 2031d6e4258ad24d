"""Per-call cost of forwarded calls: nvcc's default static cudart through the libcuda.so.1
replacement, against the `-cudart shared` program through the libcudart shim (the reference),
measured in the same run on the same `cricket server` (emu). Prints a Markdown table.

    python cext/driver/bench_forwarded.py [--server ADDR]

Needs nvcc, the built shim (make build) and a C compiler for the driver library. Not a test.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from cricket.client.local_server import LocalServer  # noqa: E402
from cricket.client.run_cli import libpython  # noqa: E402

# goal: the driver path costs at most this much more than the runtime shim's
GOAL = 1.5


def measure(exe: Path, env: dict[str, str]) -> dict[str, float]:
    proc = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=600, check=True)
    return {name: float(value) for name, value in (line.split() for line in proc.stdout.splitlines())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", help="a running cricket server (default: start one with emu)")
    args = parser.parse_args()
    import os
    shim = ROOT / "cricket" / "_preload" / "libcricket-cudart.so"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        subprocess.run([sys.executable, str(HERE / "build.py"), str(out / "driver")], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["nvcc", "-O2", "-o", str(out / "static"), str(HERE / "bench_forwarded.cu")], check=True)
        subprocess.run(["nvcc", "-O2", "-cudart", "shared", "-o", str(out / "shared"),
                        str(HERE / "bench_forwarded.cu")], check=True)
        local = None if args.server else LocalServer(["emu"])
        try:
            base = {k: v for k, v in os.environ.items() if not k.startswith("CRICKET_")}
            base.update(CRICKET_SERVER=args.server or local.address, CRICKET_PYTHON=sys.executable,
                        CRICKET_PYTHONPATH=str(ROOT), CRICKET_LIBPYTHON=libpython() or "")
            ours = measure(out / "static", {**base, "LD_LIBRARY_PATH": str(out / "driver")})
            reference = measure(out / "shared", {**base, "LD_PRELOAD": str(shim)})
        finally:
            if local is not None:
                local.stop()
    print("| what (µs per call) | static cudart → libcuda replacement | -cudart shared → libcudart shim | ratio | goal |")
    print("| --- | --- | --- | --- | --- |")
    for name, value in ours.items():
        ref = reference[name]
        print(f"| {name} | {value:.1f} | {ref:.1f} | {value / ref:.2f} | ≤ {GOAL} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
